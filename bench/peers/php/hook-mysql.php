<?php
// SPDX-License-Identifier: MIT
// The PHP peer of bench/run.sh's MariaDB rows: oncehook's work for one
// Stripe endpoint, as a PHP site would write it against its own MariaDB,
// under PHP-FPM with a persistent PDO MySQL connection (php8.2-mysql).
// Configured by the same variables as oncehook (the pool's env[...]):
// ONCEHOOK_DB (mysql://USER@localhost/DATABASE?socket=PATH, a database
// made by "oncehook init": the same events and orders tables and
// indexes), ONCEHOOK_DB_PASSWORD_FILE, ONCEHOOK_DB_PREFIX (default
// oncehook_), ONCEHOOK_STRIPE_SECRET, ONCEHOOK_STRIPE_TOLERANCE.
//
// The same work as hook.php (the SQLite peer): verify Stripe-Signature,
// parse the JSON, answer a known event from a read; otherwise, in one
// transaction, claim the event id under the events table's UNIQUE
// (endpoint, event_key) with INSERT ... ON DUPLICATE KEY UPDATE (no row
// changed: another request claimed it first) and upsert the order row
// with the values PHP read from the event.  The durability is the
// server's (innodb_flush_log_at_trx_commit as it runs for oncehook: the
// same server).  What a site owner would write: PDO's defaults
// (emulated prepares: each statement one text query, the values quoted
// by PDO), the session's default isolation (REPEATABLE READ).

function reply(int $code, array $body): void
{
	http_response_code($code);
	header('Content-Type: application/json');
	echo json_encode($body, JSON_UNESCAPED_SLASHES), "\n";
	exit;
}

if ($_SERVER['REQUEST_METHOD'] !== 'POST')
	reply(405, ['error' => 'method_not_allowed']);
$body = file_get_contents('php://input');
$t = null;
$v1 = [];
foreach (explode(',', $_SERVER['HTTP_STRIPE_SIGNATURE'] ?? '') as $kv) {
	$p = explode('=', $kv, 2);
	if (count($p) !== 2)
		continue;
	if ($p[0] === 't')
		$t = $p[1];
	elseif ($p[0] === 'v1')
		$v1[] = $p[1];
}
if ($t === null || !ctype_digit($t) || count($v1) === 0)
	reply(401, ['error' => 'invalid_signature']);
$expect = hash_hmac('sha256', $t . '.' . $body,
    getenv('ONCEHOOK_STRIPE_SECRET'));
$ok = false;
foreach ($v1 as $sig)
	$ok = hash_equals($expect, $sig) || $ok;
if (!$ok)
	reply(401, ['error' => 'invalid_signature']);
if (abs(time() - (int)$t) > (int)(getenv('ONCEHOOK_STRIPE_TOLERANCE') ?: 300))
	reply(400, ['error' => 'stale_timestamp']);
$ev = json_decode($body, true);
if (!is_array($ev) || !isset($ev['id']) || !is_string($ev['id']))
	reply(400, ['error' => 'missing_key']);
$key = $ev['id'];
$type = is_string($ev['type'] ?? null) ? $ev['type'] : null;
$hash = hash('sha256', $body);
$events = '`' . (getenv('ONCEHOOK_DB_PREFIX') !== false ?
    getenv('ONCEHOOK_DB_PREFIX') : 'oncehook_') . 'events`';

try {
	$u = parse_url(getenv('ONCEHOOK_DB'));
	parse_str($u['query'] ?? '', $q);
	$dsn = 'mysql:dbname=' . ltrim($u['path'], '/') . ';charset=utf8mb4;' .
	    (isset($q['socket']) ? 'unix_socket=' . $q['socket'] :
	    'host=' . $u['host'] . ';port=' . ($u['port'] ?? 3306));
	$pw = rtrim((string)@file_get_contents(
	    getenv('ONCEHOOK_DB_PASSWORD_FILE')), "\r\n");
	$db = new PDO($dsn, $u['user'], $pw, [
		PDO::ATTR_PERSISTENT => true,
		PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
	]);
	$st = $db->prepare("SELECT payload_hash FROM $events " .
	    'WHERE endpoint = ? AND event_key = ?');
	$st->execute(['stripe', $key]);
	$known = $st->fetchColumn();
	$st->closeCursor();
	if ($known !== false) {
		if ($known !== $hash)
			reply(422, ['error' => 'key_conflict', 'key' => $key]);
		header('Idempotent-Replayed: true');
		reply(200, ['status' => 'already_processed', 'key' => $key]);
	}
	$now = time();
	$db->beginTransaction();
	$st = $db->prepare("INSERT INTO $events (endpoint, event_key, type, " .
	    'payload_hash, payload, received_at, processed_at, expires_at) ' .
	    'VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE id = id');
	$st->execute(['stripe', $key, $type, $hash, $body, $now, $now,
	    $now + 30 * 86400]);
	if ($st->rowCount() === 0) {
		$db->rollBack();
		header('Idempotent-Replayed: true');
		reply(200, ['status' => 'already_processed', 'key' => $key]);
	}
	$o = $ev['data']['object'] ?? null;
	$order = is_array($o) ? ($o['metadata']['order_id'] ?? null) : null;
	if ($type === 'payment_intent.succeeded' &&
	    (is_string($order) || is_int($order))) {
		// sql/actions/mysql/orders.sql's payment_intent.succeeded, its
		// values read here: the details first kept, paid once.
		$st = $db->prepare(<<<'SQL'
INSERT INTO orders (id, amount, currency, customer_email, payment_id,
    paid_at, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON DUPLICATE KEY UPDATE
    amount = COALESCE(amount, VALUES(amount)),
    currency = COALESCE(currency, VALUES(currency)),
    customer_email = COALESCE(customer_email, VALUES(customer_email)),
    payment_id = COALESCE(payment_id, VALUES(payment_id)),
    paid_at = COALESCE(paid_at, VALUES(paid_at)),
    updated_at = VALUES(updated_at)
SQL);
		$st->execute([(string)$order,
		    is_int($o['amount'] ?? null) ? $o['amount'] : null,
		    $o['currency'] ?? null, $o['receipt_email'] ?? null,
		    $o['id'] ?? null, $now, $now, $now]);
	}
	$db->commit();
} catch (PDOException $e) {
	try {
		if (isset($db) && $db->inTransaction())
			$db->rollBack();
	} catch (Throwable $e2) {
		// The connection is gone.
	}
	header('Retry-After: 5');
	reply(503, ['error' => 'unavailable']);
}
reply(200, ['status' => 'processed', 'key' => $key]);
