<?php
// SPDX-License-Identifier: MIT
// oncehook outbox receiver: the site's own PHP code, told by "oncehook
// deliver" what happened (docs/operations.md).  Set in the web server's
// environment (or edit the two lines below):
//   OUTBOX_SECRET  the same whsec_... as ONCEHOOK_OUTBOX_SECRET
//   OUTBOX_DSN     the site's database, as PDO names it, e.g.
//                  "sqlite:/var/lib/shop/shop.sqlite" or
//                  "mysql:host=localhost;dbname=shop" (+ OUTBOX_DB_USER,
//                  OUTBOX_DB_PASSWORD)
// and point ONCEHOOK_OUTBOX_ORDER_PAID_URL at it, e.g.
// https://shop.example/outbox-receiver.php.
//
// oncehook sends each row at least once, with a stable id (webhook-id):
// a retry after a lost answer, or after its deliverer died mid-POST,
// carries the same id.  So this file (1) verifies the Standard Webhooks
// signature over the raw body, (2) records the id in the same database
// transaction as its effect, so a second delivery of the id changes
// nothing, and (3) answers 2xx only after that commit.  Any other answer
// (or none within ONCEHOOK_OUTBOX_TIMEOUT) is retried, with backoff.
declare(strict_types=1);

// The Standard Webhooks signature: v1,base64(HMAC-SHA256 of
// "id.timestamp.body", keyed with the base64-decoded secret), one of the
// space-separated signatures in the header; the timestamp within
// $tolerance seconds of now, either way (a captured request replayed
// later is refused).
function outbox_verify(string $secret, string $id, string $ts, string $sigs,
    string $body, int $tolerance = 300): bool
{
	if ($id === '' || !ctype_digit($ts) ||
	    abs(time() - (int)$ts) > $tolerance)
		return false;
	if (strncmp($secret, 'whsec_', 6) === 0)
		$secret = substr($secret, 6);
	$key = base64_decode($secret, true);
	if ($key === false || $key === '')
		return false;
	$want = base64_encode(hash_hmac('sha256', "$id.$ts.$body", $key, true));
	foreach (explode(' ', $sigs) as $sig) {
		$p = explode(',', $sig, 2);
		if (count($p) === 2 && $p[0] === 'v1' && hash_equals($want, $p[1]))
			return true;
	}
	return false;
}

// Run $effect($db) once per id: the id is inserted in the transaction of
// the effect, under a primary key, so of two deliveries of one id (even
// at the same moment) one commits and the other changes nothing.
// Returns true if the effect ran now, false if the id was seen before.
function outbox_once(PDO $db, string $id, string $type, callable $effect): bool
{
	$db->beginTransaction();
	try {
		$db->prepare('INSERT INTO outbox_seen (id, type, seen_at) ' .
		    'VALUES (?, ?, ?)')->execute([$id, $type, time()]);
	} catch (PDOException $e) {
		$db->rollBack();
		// The id's row is there (a duplicate key): seen before.  Any
		// other failure is one (500: retried).
		$st = $db->prepare('SELECT 1 FROM outbox_seen WHERE id = ?');
		$st->execute([$id]);
		if ($st->fetchColumn() !== false)
			return false;
		throw $e;
	}
	try {
		$effect($db);
		$db->commit();
	} catch (Throwable $e) {
		$db->rollBack();
		throw $e;
	}
	return true;
}

// What the site does: here, note the event beside its order (the shop's
// own table).  Replace with the site's code: mark the order paid in its
// order table, queue its invoice, tell the warehouse...
function outbox_effect(PDO $db, array $msg): void
{
	$db->prepare('INSERT INTO shop_order_events (order_id, type, at) ' .
	    'VALUES (?, ?, ?)')->execute([(string)($msg['order_id'] ?? ''),
	    (string)($msg['type'] ?? ''), time()]);
}

function outbox_answer(int $status, string $text): void
{
	http_response_code($status);
	header('Content-Type: application/json');
	echo json_encode(['status' => $text]), "\n";
}

function outbox_main(): void
{
	$secret = (string)getenv('OUTBOX_SECRET');
	$body = (string)file_get_contents('php://input');
	$id = $_SERVER['HTTP_WEBHOOK_ID'] ?? '';
	if ($_SERVER['REQUEST_METHOD'] !== 'POST') {
		outbox_answer(405, 'POST only');
		return;
	}
	if ($secret === '' || !outbox_verify($secret, $id,
	    $_SERVER['HTTP_WEBHOOK_TIMESTAMP'] ?? '',
	    $_SERVER['HTTP_WEBHOOK_SIGNATURE'] ?? '', $body)) {
		outbox_answer(401, 'invalid signature');
		return;
	}
	$msg = json_decode($body, true);
	if (!is_array($msg)) {
		outbox_answer(400, 'not a JSON object');
		return;
	}
	$db = new PDO((string)getenv('OUTBOX_DSN'),
	    getenv('OUTBOX_DB_USER') ?: null,
	    getenv('OUTBOX_DB_PASSWORD') ?: null,
	    [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION]);
	$db->exec('CREATE TABLE IF NOT EXISTS outbox_seen (' .
	    'id VARCHAR(64) PRIMARY KEY, type VARCHAR(128), seen_at INTEGER)');
	$db->exec('CREATE TABLE IF NOT EXISTS shop_order_events (' .
	    'order_id VARCHAR(64), type VARCHAR(128), at INTEGER)');
	$new = outbox_once($db, $id, (string)($msg['type'] ?? ''),
	    function (PDO $db) use ($msg) { outbox_effect($db, $msg); });
	outbox_answer(200, $new ? 'done' : 'seen before');
}

// Run as the request's script; included (by a test), define only.
if (PHP_SAPI !== 'cli' &&
    realpath($_SERVER['SCRIPT_FILENAME'] ?? '') === realpath(__FILE__))
	outbox_main();
