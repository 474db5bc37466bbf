<?php
// SPDX-License-Identifier: MIT
// The minimal MariaDB peer of bench/run.sh: minimal.php's Stripe handler
// on the site's MariaDB (PDO MySQL, a persistent connection, PDO's
// defaults), as a site owner would write it: not oncehook's work re-done
// (that is hook-mysql.php).  Its table is bench/peers/minimal-mysql.sql;
// orders is the shipped one.  Configured by ONCEHOOK_DB (mysql://USER@
// HOST/DB?socket=PATH), ONCEHOOK_DB_PASSWORD_FILE,
// ONCEHOOK_STRIPE_SECRET, ONCEHOOK_STRIPE_TOLERANCE (the pool's env[...]).
//
// Verify Stripe-Signature (hash_hmac over "t.body", hash_equals, the
// timestamp's tolerance), json_decode the body, and in one transaction
// record the event id in processed_events (INSERT ... ON DUPLICATE KEY
// UPDATE event_id = event_id) and, if it went in, insert the order (six
// columns).  No read before the write, no payload stored, no hash.
// 200 {"status":"processed"}; a known id 200
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
	$now = time();
	$db->beginTransaction();
	$st = $db->prepare('INSERT INTO processed_events (event_id, type, ' .
	    'received_at) VALUES (?, ?, ?) ' .
	    'ON DUPLICATE KEY UPDATE event_id = event_id');
	$st->execute([$ev['id'], (string)($ev['type'] ?? ''), $now]);
	$new = $st->rowCount() === 1;
	if ($new) {
		$st = $db->prepare('INSERT INTO orders (id, amount, currency, ' .
		    'paid_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)');
		$st->execute([$obj['metadata']['order_id'] ?? $ev['id'],
		    $obj['amount'] ?? null, $obj['currency'] ?? null, $now, $now,
		    $now]);
	}
	$db->commit();
} catch (PDOException $e) {
	try {
		if (isset($db) && $db->inTransaction())
			$db->rollBack();
	} catch (Throwable $e2) {
	}
	reply(503, ['error' => 'unavailable']);
}
reply(200, ['status' => $new ? 'processed' : 'already_processed']);
