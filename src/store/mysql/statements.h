/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the MariaDB/MySQL store's own statements, by name.  Each is
 * prepared once per connection, on its first use (store/mysql/engine.c),
 * and every value in it is a bound ?: no value is ever written into SQL
 * text.  The text has marks filled in at prepare time from the
 * configuration and the server, not from a request: {p} is the table
 * prefix (letters, digits and _, checked by conf.c), {skip} is " SKIP
 * LOCKED" where the server has it, and {nowait} is " SKIP LOCKED" there,
 * else " NOWAIT": a row another transaction holds is not waited for.
 */
#ifndef ONCEHOOK_MYSQL_STATEMENTS_H
#define ONCEHOOK_MYSQL_STATEMENTS_H

enum myst {
	MY_SCHEMA_VERSION,	/* -> MAX(version) */
	MY_SCHEMA_ADD,		/* version, name, applied_at */
	MY_FIND_HASH,		/* hash, endpoint, key -> same, parked */
	MY_FIND_BYTES,		/* payload, endpoint, key -> same, parked */
	MY_FIND_PAYLOAD,	/* endpoint, hash, type, key -> parked */
	MY_GUARD_ROW,		/* endpoint, hash, type, key */
	MY_CONFLICT,		/* endpoint, key, hash, received_at */
	MY_INSERT,		/* endpoint, key, type, hash, payload,
				   received_at, processed_at, expires_at */
	MY_INSERT_RECEIVED,	/* endpoint, key, type, hash, payload,
				   received_at, expires_at, next_at */
	MY_COUNT_FAILURE,	/* endpoint, key, error, first_at, last_at */
	MY_FAILURES_OF,		/* endpoint, key -> attempts */
	MY_PARK,		/* endpoint, key, type, hash, payload,
				   received_at, expires_at, attempts, error,
				   next_at */
	MY_FORGET_FAILURES,	/* endpoint, key */
	MY_RUN_FAILED,		/* error, max, next_at, max, id */
	MY_PROCESSED,		/* processed_at, attempts, id */
	MY_TAKE_KEY,		/* endpoint, key -> the taken row */
	MY_TAKE_KEY_SKIP,	/* endpoint, key -> the taken row */
	MY_TAKE_DUE,		/* now, lead, endpoints -> the taken row */
	MY_DUE,			/* now, lead, endpoints -> id, endpoint,
				   key of the oldest due, unlocked */
	MY_LEASE_LOCK,		/* id -> id, unless another holds it */
	MY_LEASE_RUN,		/* until, id, now, lead */
	MY_LIST,		/* with_payload, endpoint x2, key x2,
				   status x2, limit */
	MY_PRUNE_COUNT,		/* before, status */
	MY_PRUNE,		/* before, status */
	MY_PRUNE_GUARDS,	/* (none) */
	MY_PRUNE_FAILURES,	/* now */
	MY_PRUNE_CONFLICTS_COUNT, /* before, endpoint */
	MY_PRUNE_CONFLICTS,	/* before, endpoint */
	MY_ROWS,		/* overdue_before, now */
	MY_ROWS_CONFLICTS,	/* (none) */
	MY_OB_TOPICS_DUE,	/* (none) -> topic */
	MY_OB_PICK,		/* topics -> the row */
	MY_OB_LEASE,		/* lease seconds, token, seq */
	MY_OB_DELIVERED,	/* seq, token */
	MY_OB_FAILED,		/* error, max, wait, max, seq, token */
	MY_OB_RETRY,		/* dead, waiting */
	MY_OB_LIST,		/* with_payload, id x2, key, endpoint, key,
				   status x2, limit */
	MY_OB_TOPICS,		/* (none) */
	MY_OB_PRUNE_COUNT,	/* status, now, status */
	MY_OB_PRUNE,		/* status */
	MY_PRIVILEGES,		/* prefix */
	MY_PACKET,		/* (none) -> max_allowed_packet */
	MY_FOREIGN,		/* (none) -> a table of oncehook's name
				   that is not oncehook's */
	MY__MAX
};

extern const char *const my_statements[MY__MAX];

#endif
