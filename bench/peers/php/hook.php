<?php
// SPDX-License-Identifier: MIT
// The PHP peer of bench/run.sh: oncehook's work for one Stripe endpoint,
// as a PHP site would write it, under PHP-FPM with a persistent PDO
// connection.  Configured by the same variables as oncehook (passed by
// the pool's env[...]): ONCEHOOK_DB (a database made by "oncehook init":
// the same events and orders tables and indexes),
// ONCEHOOK_STRIPE_SECRET, ONCEHOOK_STRIPE_TOLERANCE,
// ONCEHOOK_SYNCHRONOUS, ONCEHOOK_BUSY_TIMEOUT_MS.
//
// The same work: verify Stripe-Signature (HMAC-SHA256 over "t.body",
// constant-time compare, timestamp tolerance), parse the JSON, answer a
// known event from a read; otherwise, in one BEGIN IMMEDIATE
// transaction, claim the event id in events (UNIQUE (endpoint, key)) and
// insert the order row with orders.sql's statement; the same answers.
// Differences from oncehook (bench/README.md): the payload hash is the
// SHA-256 of the body as received (oncehook hashes canonical JSON), no
// log line per request, statements are prepared on every request (PHP
// keeps the connection, not its statements).

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

try {
	$db = new PDO('sqlite:' . getenv('ONCEHOOK_DB'), null, null, [
		PDO::ATTR_PERSISTENT => true,
		PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
		PDO::ATTR_TIMEOUT =>
		    (int)((getenv('ONCEHOOK_BUSY_TIMEOUT_MS') ?: 5000) / 1000),
	]);
	// Per connection; a persistent one keeps it, but a fresh process's
	// first request must set it: cheap, so every request does.
	$db->exec('PRAGMA synchronous = ' .
	    (getenv('ONCEHOOK_SYNCHRONOUS') === 'normal' ? 'NORMAL' : 'FULL'));
	$st = $db->prepare('SELECT payload_hash FROM events ' .
	    'WHERE endpoint = ? AND key = ?');
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
	$db->exec('BEGIN IMMEDIATE');
	$st = $db->prepare('INSERT INTO events (endpoint, key, type, ' .
	    'payload_hash, payload, received_at, processed_at, expires_at) ' .
	    'VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (endpoint, key) ' .
	    'DO NOTHING');
	$st->execute(['stripe', $key, $type, $hash, $body, $now, $now,
	    $now + 30 * 86400]);
	if ($st->rowCount() === 0) {
		$db->exec('ROLLBACK');
		header('Idempotent-Replayed: true');
		reply(200, ['status' => 'already_processed', 'key' => $key]);
	}
	if ($type === 'payment_intent.succeeded') {
		// sql/actions/orders.sql, "-- on: payment_intent.succeeded".
		$st = $db->prepare(<<<'SQL'
INSERT INTO orders (id, amount, currency, customer_email, payment_id,
    paid_at, created_at, updated_at)
SELECT json_extract(:payload, '$.data.object.metadata.order_id'),
    json_extract(:payload, '$.data.object.amount'),
    json_extract(:payload, '$.data.object.currency'),
    json_extract(:payload, '$.data.object.receipt_email'),
    json_extract(:payload, '$.data.object.id'),
    :received_at, :received_at, :received_at
WHERE json_type(:payload, '$.data.object.metadata.order_id') IN ('text', 'integer')
ON CONFLICT (id) DO UPDATE SET
    amount = COALESCE(amount, excluded.amount),
    currency = COALESCE(currency, excluded.currency),
    customer_email = COALESCE(customer_email, excluded.customer_email),
    payment_id = COALESCE(payment_id, excluded.payment_id),
    paid_at = COALESCE(paid_at, excluded.paid_at),
    updated_at = excluded.updated_at
SQL);
		$st->execute([':payload' => $body, ':received_at' => $now]);
	}
	$db->exec('COMMIT');
} catch (PDOException $e) {
	try {
		if (isset($db))
			$db->exec('ROLLBACK');
	} catch (Throwable $e2) {
		// No transaction was open.
	}
	header('Retry-After: 5');
	reply(503, ['error' => 'unavailable']);
}
reply(200, ['status' => 'processed', 'key' => $key]);
