/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the schema migrations, compiled in from sql/migrations (and
 * sql/mysql) by build-aux/sql2c.sh.  Migration i (1-based) takes a
 * database from version i-1 to i.
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
/* The MariaDB/MySQL store's, from sql/mysql (store/mysql/engine.c): each file's
 * {prefix} is ONCEHOOK_DB_PREFIX. */
extern const struct migration	my_migrations[];
extern const size_t		nmy_migrations;

#endif
