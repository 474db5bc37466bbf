/*
 * oncehook: who may use the -wal and -shm at a database's path (see
 * walguard.h).
 */
#define _GNU_SOURCE 1	/* F_OFD_SETLK */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "walguard.h"

/*
 * A region of 2^31 bytes per database name (FNV-1a of the last path
 * segment, 31 bits): the byte is the inode's low 31 bits within it.
 * Regions and bytes stay below 2^62, inside any off_t.
 */
#define REGION_BITS	31
#define REGION_SIZE	((off_t)1 << REGION_BITS)

static off_t
region_of(const char *name)
{
	uint32_t	 h = 2166136261u;

	for (; *name != '\0'; name++) {
		h ^= (unsigned char)*name;
		h *= 16777619u;
	}
	return (off_t)(h & (REGION_SIZE - 1)) << REGION_BITS;
}

/* 1 if another description holds a lock in [start, start + len). */
static int
held(int fd, off_t start, off_t len)
{
	struct flock	 fl;

	if (len <= 0)
		return 0;
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = start;
	fl.l_len = len;
	if (fcntl(fd, F_OFD_GETLK, &fl) == -1)
		return 0;
	return fl.l_type != F_UNLCK;
}

int
walguard_take(const char *dbpath, ino_t ino, char *err, size_t errsz)
{
	struct flock	 fl;
	char		 dir[4096];
	const char	*slash, *name;
	off_t		 region, byte;
	int		 fd;

	if ((slash = strrchr(dbpath, '/')) == NULL) {
		snprintf(dir, sizeof(dir), ".");
		name = dbpath;
	} else {
		if ((size_t)(slash - dbpath) >= sizeof(dir))
			return WALGUARD_NONE;
		if (slash == dbpath)
			snprintf(dir, sizeof(dir), "/");
		else
			snprintf(dir, sizeof(dir), "%.*s",
			    (int)(slash - dbpath), dbpath);
		name = slash + 1;
	}
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return WALGUARD_NONE;
	region = region_of(name);
	byte = region + (off_t)(ino & (ino_t)(REGION_SIZE - 1));
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_RDLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = byte;
	fl.l_len = 1;
	if (fcntl(fd, F_OFD_SETLK, &fl) == -1) {
		close(fd);
		return WALGUARD_NONE;
	}
	if (held(fd, region, byte - region) ||
	    held(fd, byte + 1, region + REGION_SIZE - byte - 1)) {
		snprintf(err, errsz, "%s: another process still has the "
		    "database file that was at this path open (it was "
		    "replaced); its -wal is not this file's: waiting until it "
		    "lets go", dbpath);
		close(fd);
		return WALGUARD_FOREIGN;
	}
	return fd;
}

void
walguard_release(int fd)
{
	if (fd >= 0)
		close(fd);
}
