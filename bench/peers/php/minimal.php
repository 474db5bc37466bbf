<?php
// SPDX-License-Identifier: MIT
// The minimal PHP peer of bench/run.sh: the Stripe handler a site owner
// would write, not oncehook's work re-done (that is hook.php).  Under
// PHP-FPM with a persistent PDO connection, WAL (the database is made by
// "oncehook init", plus bench/peers/minimal.sql), the row's synchronous.
// Configured by ONCEHOOK_DB, ONCEHOOK_STRIPE_SECRET,
// ONCEHOOK_STRIPE_TOLERANCE, ONCEHOOK_SYNCHRONOUS,
// ONCEHOOK_BUSY_TIMEOUT_MS (the pool's env[...]).
//
// Verify Stripe-Signature (hash_hmac over "t.body", hash_equals, the
// timestamp's tolerance), json_decode the body, and in one BEGIN
// IMMEDIATE transaction record the event id in processed_events (ON
// CONFLICT DO NOTHING) and, if it went in, insert the order (six
// columns).  200 {"status":"processed"}; a known id 200
// {"status":"already_processed"}; a bad signature 401.

function reply(int $code, array $body): void
{
	http_response_code($code);
	header('Content-Type: application/json');
	echo json_encode($body);
	exit;
}

$body = file_get_contents('php://input');
$t = null;
$v1 = [];
foreach (explode(',', $_SERVER['HTTP_STRIPE_SIGNATURE'] ?? '') as $kv) {
	$p = explode('=', $kv, 2);
	if (count($p) === 2 && $p[0] === 't')
		$t = $p[1];
	elseif (count($p) === 2 && $p[0] === 'v1')
		$v1[] = $p[1];
}
$ok = false;
if ($t !== null) {
	$expect = hash_hmac('sha256', $t . '.' . $body,
	    getenv('ONCEHOOK_STRIPE_SECRET'));
	foreach ($v1 as $sig)
		$ok = $ok || hash_equals($expect, $sig);
}
if (!$ok || abs(time() - (int)$t) >
    (int)(getenv('ONCEHOOK_STRIPE_TOLERANCE') ?: 300))
	reply(401, ['error' => 'invalid_signature']);
$ev = json_decode($body, true);
if (!is_array($ev) || !is_string($ev['id'] ?? null))
	reply(400, ['error' => 'bad_event']);
$obj = $ev['data']['object'] ?? [];

try {
	$db = new PDO('sqlite:' . getenv('ONCEHOOK_DB'), null, null, [
		PDO::ATTR_PERSISTENT => true,
		PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
		PDO::ATTR_TIMEOUT =>
		    (int)((getenv('ONCEHOOK_BUSY_TIMEOUT_MS') ?: 5000) / 1000),
	]);
	$db->exec('PRAGMA journal_mode = WAL');
	$db->exec('PRAGMA synchronous = ' .
	    (getenv('ONCEHOOK_SYNCHRONOUS') === 'normal' ? 'NORMAL' : 'FULL'));
	$now = time();
	$db->exec('BEGIN IMMEDIATE');
	$st = $db->prepare('INSERT INTO processed_events (event_id, type, ' .
	    'received_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING');
	$st->execute([$ev['id'], (string)($ev['type'] ?? ''), $now]);
	$new = $st->rowCount() === 1;
	if ($new) {
		$st = $db->prepare('INSERT INTO orders (id, amount, currency, ' .
		    'paid_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)');
		$st->execute([$obj['metadata']['order_id'] ?? $ev['id'],
		    $obj['amount'] ?? null, $obj['currency'] ?? null, $now, $now,
		    $now]);
	}
	$db->exec('COMMIT');
} catch (PDOException $e) {
	try {
		if (isset($db))
			$db->exec('ROLLBACK');
	} catch (Throwable $e2) {
		// No transaction was open.
	}
	reply(503, ['error' => 'unavailable']);
}
reply(200, ['status' => $new ? 'processed' : 'already_processed']);
