/*
 * oncehook: the schema migrations, compiled in from sql/migrations by
 * build-aux/sql2c.sh.  Migration i (1-based) takes a database from
 * user_version i-1 to i.
 */
#ifndef ONCEHOOK_MIGRATIONS_H
#define ONCEHOOK_MIGRATIONS_H

#include <stddef.h>

struct migration {
	int		 version;
	const char	*name;
	const char	*sql;
};

extern const struct migration	migrations[];
extern const size_t		nmigrations;

#endif
