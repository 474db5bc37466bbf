/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the MariaDB/MySQL store's statements (store/mysql/statements.h
 * says how they are used).  The rows they read and write are those of
 * sql/mysql/'s migrations.
 */
#include "config.h"

#include "store/engine.h"
#include "store/mysql/statements.h"

#define TAKEN	"SELECT id, endpoint, event_key, type, payload_hash, payload," \
		" received_at, attempts, status FROM `{p}events`"

const char *const my_statements[MY__MAX] = {
	[MY_SCHEMA_VERSION] = "SELECT MAX(version) FROM `{p}schema`",
	[MY_SCHEMA_ADD] = "INSERT INTO `{p}schema` (version, name,"
	    " applied_at) VALUES (?, ?, ?)",
	[MY_FIND_HASH] = "SELECT payload_hash = ?, status IN ('failed',"
	    " 'dead') FROM `{p}events` WHERE endpoint = ? AND event_key = ?",
	[MY_FIND_BYTES] = "SELECT payload = ?, status IN ('failed', 'dead')"
	    " FROM `{p}events` WHERE endpoint = ? AND event_key = ?",
	/* No type and an empty one are one, as in the guard's rows. */
	[MY_FIND_PAYLOAD] = "SELECT status IN ('failed', 'dead') FROM"
	    " `{p}events` WHERE endpoint = ? AND payload_hash = ? AND"
	    " COALESCE(type, '') = ? AND event_key <> ? LIMIT 1",
	[MY_GUARD_ROW] = "INSERT INTO `{p}payloads` (endpoint, payload_hash,"
	    " type, event_key) VALUES (?, ?, ?, ?) ON DUPLICATE KEY UPDATE"
	    " endpoint = endpoint",
	[MY_CONFLICT] = "INSERT INTO `{p}conflicts` (endpoint, event_key,"
	    " payload_hash, received_at) VALUES (?, ?, ?, ?)",
	[MY_INSERT] = "INSERT INTO `{p}events` (endpoint, event_key, type,"
	    " payload_hash, payload, received_at, processed_at, expires_at)"
	    " VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE id = id",
	[MY_INSERT_RECEIVED] = "INSERT INTO `{p}events` (endpoint, event_key,"
	    " type, payload_hash, payload, received_at, expires_at, status,"
	    " attempts, next_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'received', 0,"
	    " ?) ON DUPLICATE KEY UPDATE id = id",
	[MY_COUNT_FAILURE] = "INSERT INTO `{p}failures` (endpoint, event_key,"
	    " attempts, last_error, first_at, last_at) VALUES (?, ?, 1, ?, ?,"
	    " ?) ON DUPLICATE KEY UPDATE attempts = attempts + 1, last_error"
	    " = VALUES(last_error), last_at = VALUES(last_at)",
	[MY_FAILURES_OF] = "SELECT attempts FROM `{p}failures` WHERE"
	    " endpoint = ? AND event_key = ?",
	[MY_PARK] = "INSERT INTO `{p}events` (endpoint, event_key, type,"
	    " payload_hash, payload, status, received_at, expires_at,"
	    " attempts, last_error, next_at) VALUES (?, ?, ?, ?, ?, 'failed',"
	    " ?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE id = id",
	[MY_FORGET_FAILURES] = "DELETE FROM `{p}failures` WHERE endpoint = ?"
	    " AND event_key = ?",
	/* SET's assignments are made left to right: attempts, once
	 * raised, is the new count in the next two. */
	[MY_RUN_FAILED] = "UPDATE `{p}events` SET attempts = attempts + 1,"
	    " last_error = ?, next_at = IF(attempts >= ?, NULL, ?), status ="
	    " IF(attempts >= ?, 'dead', 'failed') WHERE id = ? AND status <>"
	    " 'processed'",
	[MY_PROCESSED] = "UPDATE `{p}events` SET status = 'processed',"
	    " processed_at = ?, attempts = ?, last_error = NULL, next_at ="
	    " NULL WHERE id = ? AND status <> 'processed'",
	[MY_TAKE_KEY] = TAKEN " WHERE endpoint = ? AND event_key = ?"
	    " FOR UPDATE",
	[MY_TAKE_KEY_SKIP] = TAKEN " WHERE endpoint = ? AND event_key = ?"
	    " FOR UPDATE{skip}",
	[MY_TAKE_DUE] = TAKEN " WHERE status IN ('received', 'failed') AND"
	    " COALESCE(next_at, 0) <= ? + IF(status = 'received', ?, 0) AND"
	    " FIND_IN_SET(endpoint, ?) ORDER BY next_at, id LIMIT 1"
	    " FOR UPDATE{skip}",
	/* A work runner's lease (engine_ops.lease): a plain read of the
	 * oldest due, then each, in a transaction of its own, locked
	 * without waiting (a row another run holds is passed by) and
	 * leased by a conditional update of its next_at. */
	[MY_DUE] = "SELECT id, endpoint, event_key FROM `{p}events` WHERE"
	    " status IN ('received', 'failed') AND COALESCE(next_at, 0) <= ?"
	    " + IF(status = 'received', ?, 0) AND FIND_IN_SET(endpoint, ?)"
	    " ORDER BY next_at, id LIMIT 8",
	[MY_LEASE_LOCK] = "SELECT id FROM `{p}events` WHERE id = ?"
	    " FOR UPDATE{nowait}",
	[MY_LEASE_RUN] = "UPDATE `{p}events` SET next_at = ? WHERE id = ? AND"
	    " status IN ('received', 'failed') AND COALESCE(next_at, 0) <= ?"
	    " + IF(status = 'received', ?, 0)",
	[MY_LIST] = "SELECT endpoint, event_key, type, payload_hash, status,"
	    " IF(?, payload, NULL), received_at, COALESCE(processed_at, -1),"
	    " COALESCE(expires_at, -1), attempts, last_error,"
	    " COALESCE(next_at, -1) FROM `{p}events`"
	    " WHERE (? IS NULL OR endpoint = ?) AND (? IS NULL OR"
	    " event_key = ?) AND (? IS NULL OR status = ?)"
	    " ORDER BY id DESC LIMIT ?",
	[MY_PRUNE_COUNT] = "SELECT COUNT(*) FROM `{p}events` WHERE"
	    " expires_at < ? AND status IN ('processed', ?)",
	[MY_PRUNE] = "DELETE FROM `{p}events` WHERE expires_at < ? AND"
	    " status IN ('processed', ?) LIMIT 500",
	/* MySQL refuses LIMIT in a DELETE that joins: the rows by a
	 * derived table. */
	[MY_PRUNE_GUARDS] = "DELETE FROM `{p}payloads` WHERE (endpoint,"
	    " payload_hash, type) IN (SELECT * FROM (SELECT p.endpoint,"
	    " p.payload_hash, p.type FROM `{p}payloads` p WHERE NOT EXISTS"
	    " (SELECT 1 FROM `{p}events` e WHERE e.endpoint = p.endpoint AND"
	    " e.event_key = p.event_key) LIMIT 500) x)",
	[MY_PRUNE_FAILURES] = "DELETE FROM `{p}failures` WHERE last_at < ? - "
	    STORE_FAILURES_TTL,
	[MY_PRUNE_CONFLICTS_COUNT] = "SELECT COUNT(*) FROM `{p}conflicts`"
	    " WHERE received_at < ? AND endpoint = ?",
	[MY_PRUNE_CONFLICTS] = "DELETE FROM `{p}conflicts` WHERE"
	    " received_at < ? AND endpoint = ? LIMIT 500",
	[MY_ROWS] = "SELECT endpoint, COUNT(*), SUM(status = 'processed'),"
	    " SUM(status = 'received'), SUM(status = 'failed'),"
	    " SUM(status = 'dead'), SUM(status = 'received' AND"
	    " COALESCE(next_at, 0) < ?), SUM(status = 'processed' AND"
	    " expires_at < ?) FROM `{p}events` GROUP BY endpoint",
	[MY_ROWS_CONFLICTS] = "SELECT endpoint, COUNT(*) FROM `{p}conflicts`"
	    " GROUP BY endpoint",
	/* The outbox's times are the server's clock: see ob_pick. */
	[MY_OB_TOPICS_DUE] = "SELECT DISTINCT topic FROM `{p}outbox` WHERE"
	    " status = 'pending' AND next_at <= UNIX_TIMESTAMP()",
	[MY_OB_PICK] = "SELECT id, topic, endpoint, event_key, payload,"
	    " created_at, attempts, seq FROM `{p}outbox` WHERE status ="
	    " 'pending' AND next_at <= UNIX_TIMESTAMP() AND"
	    " FIND_IN_SET(topic, ?) ORDER BY next_at, seq LIMIT 1"
	    " FOR UPDATE{skip}",
	[MY_OB_LEASE] = "UPDATE `{p}outbox` SET attempts = attempts + 1,"
	    " next_at = UNIX_TIMESTAMP() + ?, lease = ? WHERE seq = ?",
	[MY_OB_DELIVERED] = "UPDATE `{p}outbox` SET status = 'delivered',"
	    " delivered_at = UNIX_TIMESTAMP(), last_error = NULL, lease = NULL"
	    " WHERE seq = ? AND status = 'pending' AND lease = ?",
	[MY_OB_FAILED] = "UPDATE `{p}outbox` SET last_error = ?, lease ="
	    " NULL, next_at = UNIX_TIMESTAMP() + IF(attempts >= ?, 0, ?),"
	    " status = IF(attempts >= ?, 'dead', 'pending') WHERE seq = ? AND"
	    " status = 'pending' AND lease = ?",
	[MY_OB_RETRY] = "UPDATE `{p}outbox` SET attempts = IF(status ="
	    " 'dead', 0, attempts), status = 'pending', next_at ="
	    " UNIX_TIMESTAMP() WHERE (? AND status = 'dead') OR (? AND"
	    " status = 'pending' AND next_at > UNIX_TIMESTAMP() AND lease IS"
	    " NULL)",
	[MY_OB_LIST] = "SELECT id, topic, IF(?, payload, NULL), endpoint,"
	    " event_key, status, last_error, created_at, attempts, next_at,"
	    " COALESCE(delivered_at, -1) FROM `{p}outbox`"
	    " WHERE (? IS NULL OR id = ?)"
	    " AND (? IS NULL OR (endpoint = ? AND event_key = ?))"
	    " AND (? IS NULL OR status = ?) ORDER BY seq DESC LIMIT ?",
	[MY_OB_TOPICS] = "SELECT topic, status, COUNT(*), MIN(created_at)"
	    " FROM `{p}outbox` GROUP BY topic, status ORDER BY topic, status",
	[MY_OB_PRUNE_COUNT] = "SELECT COUNT(*) FROM `{p}outbox` o WHERE"
	    " o.status IN ('delivered', ?) AND NOT EXISTS (SELECT 1 FROM"
	    " `{p}events` e WHERE e.endpoint = o.endpoint AND e.event_key ="
	    " o.event_key AND (e.expires_at IS NULL OR e.expires_at >= ? OR"
	    " e.status NOT IN ('processed', ?)))",
	[MY_OB_PRUNE] = "DELETE FROM `{p}outbox` WHERE seq IN (SELECT seq"
	    " FROM (SELECT o.seq FROM `{p}outbox` o WHERE o.status IN"
	    " ('delivered', ?) AND NOT EXISTS (SELECT 1 FROM `{p}events` e"
	    " WHERE e.endpoint = o.endpoint AND e.event_key = o.event_key)"
	    " ORDER BY o.seq LIMIT 500) x)",
	/* The privileges shown to the user: its own, through a role or a
	 * wildcard database grant too. */
	[MY_PRIVILEGES] = "SELECT PRIVILEGE_TYPE FROM"
	    " information_schema.USER_PRIVILEGES UNION SELECT PRIVILEGE_TYPE"
	    " FROM information_schema.SCHEMA_PRIVILEGES WHERE DATABASE()"
	    " LIKE TABLE_SCHEMA UNION SELECT PRIVILEGE_TYPE FROM"
	    " information_schema.TABLE_PRIVILEGES WHERE TABLE_SCHEMA ="
	    " DATABASE() AND TABLE_NAME = CONCAT(?, 'events')",
	[MY_PACKET] = "SELECT @@max_allowed_packet",
	/* A table named as one of oncehook's, without the two columns
	 * every one of them has (a site's own pc_events, with the prefix
	 * pc_, even one with an endpoint column). */
	[MY_FOREIGN] = "SELECT t.TABLE_NAME FROM information_schema.TABLES t"
	    " WHERE t.TABLE_SCHEMA = DATABASE() AND t.TABLE_NAME IN"
	    " ('{p}events', '{p}payloads', '{p}conflicts', '{p}failures',"
	    " '{p}outbox', '{p}schema') AND (SELECT COUNT(*) FROM"
	    " information_schema.COLUMNS c WHERE c.TABLE_SCHEMA ="
	    " t.TABLE_SCHEMA AND c.TABLE_NAME = t.TABLE_NAME AND"
	    " c.COLUMN_NAME IN (IF(t.TABLE_NAME = '{p}schema', 'applied_at',"
	    " 'endpoint'), IF(t.TABLE_NAME = '{p}schema', 'version',"
	    " 'event_key'))) < 2 ORDER BY t.TABLE_NAME LIMIT 1",
};
