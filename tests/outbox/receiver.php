<?php
// SPDX-License-Identifier: MIT
// oncehook tests (tests/outbox.sh): a site's own receiver of oncehook's
// outbox deliveries, as a PHP site would write it, under PHP-FPM behind
// lighttpd.  Configured by the pool's env[...]:
//
//   RECEIVER_DIR   its directory: receiver.db (SQLite, via PDO),
//                  captures/ (every request received), and the test's
//                  marker files (below)
//   OUTBOX_SECRET  the sender's secret, whsec_ and base64 of the key
//
// For each POST:
//
// 1. It verifies the Standard Webhooks signature (the shipped
//    outbox_verify()): webhook-id,
//    webhook-timestamp, webhook-signature ("v1,<base64>", several
//    space-separated), HMAC-SHA256 keyed by the base64-decoded secret
//    over "id.timestamp.body", compared with hash_equals; the timestamp
//    within 5 minutes of now.  Anything else: 401, nothing done.
// 2. It records the request (requests table) and writes it to
//    captures/<seq>.json (the three headers, its verdict) and
//    captures/<seq>.body (the raw body), for tests/node/verify-outbox.mjs.
// 3. Markers the test leaves in RECEIVER_DIR:
//      slow-<id>    sleep before answering, 3 s or the seconds the file
//                   holds (the file is removed: once); the script goes on
//                   when the client is gone
//      nofail-<id>  no deliberate failures for that id
//      nofail       no deliberate failures at all
//      delay        sleep 50 ms on every accepted request
//      code-<id>    the status to answer instead of 200 (its content,
//                   e.g. 204 or 302): a 2xx does the effect, anything
//                   else does not (a 3xx with Location: this script)
//    Without a nofail marker, the first two accepted requests of each
//    webhook-id are answered 500 on purpose (counted in requests).
// 4. Otherwise it deduplicates by webhook-id and does its effect in one
//    transaction (the shipped outbox_once(): the id claimed in
//    outbox_seen, PRIMARY KEY, and only if the claim is new, a row in
//    effects).  200 either way (or code-<id>'s 2xx).

// The shipped receiver's parts (conf-examples/outbox-receiver.php, copied
// beside this file): its signature check and its once-per-id
// transaction are what runs here; this file adds the test's captures and
// markers around them.
require __DIR__ . '/outbox-receiver.php';

ignore_user_abort(true);
set_time_limit(60);

function reply(int $code, array $body): void
{
	http_response_code($code);
	header('Content-Type: application/json');
	echo json_encode($body, JSON_UNESCAPED_SLASHES), "\n";
}

$dir = getenv('RECEIVER_DIR');
$secret = getenv('OUTBOX_SECRET');
if (!is_string($dir) || $dir === '' || !is_string($secret) || $secret === '') {
	reply(500, ['error' => 'receiver_misconfigured']);
	exit;
}
if ($_SERVER['REQUEST_METHOD'] !== 'POST') {
	reply(405, ['error' => 'method_not_allowed']);
	exit;
}
$body = file_get_contents('php://input');
$id = $_SERVER['HTTP_WEBHOOK_ID'] ?? '';
$ts = $_SERVER['HTTP_WEBHOOK_TIMESTAMP'] ?? '';
$sigs = $_SERVER['HTTP_WEBHOOK_SIGNATURE'] ?? '';
$ctype = $_SERVER['CONTENT_TYPE'] ?? '';

// 1. The signature: the shipped receiver's outbox_verify().
function verify(string $secret, string $id, string $ts, string $sigs,
    string $body): ?string
{
	if ($id === '' || $ts === '' || $sigs === '')
		return 'missing headers';
	return outbox_verify($secret, $id, $ts, $sigs, $body) ? null :
	    'refused by outbox_verify()';
}
$why = verify($secret, $id, $ts, $sigs, $body);
$verdict = $why === null ? 'accepted' : 'refused';

try {
	$db = new PDO('sqlite:' . $dir . '/receiver.db', null, null, [
	    PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
	    PDO::ATTR_TIMEOUT => 20,	// the busy timeout, in seconds
	]);
	$db->exec('PRAGMA journal_mode = WAL');
	$db->exec('CREATE TABLE IF NOT EXISTS requests (
	    seq INTEGER PRIMARY KEY AUTOINCREMENT,
	    webhook_id TEXT, verdict TEXT NOT NULL, why TEXT, status INTEGER,
	    order_id TEXT, pid INTEGER, started REAL NOT NULL, finished REAL)');
	// No UNIQUE here: a second effect for one id must show.
	$db->exec('CREATE TABLE IF NOT EXISTS effects (
	    webhook_id TEXT NOT NULL, seq INTEGER NOT NULL, order_id TEXT,
	    event_key TEXT, amount NUMERIC)');

	$ev = json_decode($body, true);
	$order = is_array($ev) && isset($ev['order_id']) ? (string)$ev['order_id']
	    : null;
	$st = $db->prepare('INSERT INTO requests (webhook_id, verdict, why,
	    order_id, pid, started) VALUES (?, ?, ?, ?, ?, ?)');
	$st->execute([$id, $verdict, $why, $order, getmypid(),
	    microtime(true)]);
	$seq = (int)$db->lastInsertId();

	// 2. The capture: the body first, then its description (renamed
	// into place, so a reader never sees half of one).
	$cap = $dir . '/captures';
	file_put_contents("$cap/$seq.body", $body);
	file_put_contents("$cap/$seq.json.tmp", json_encode([
	    'seq' => $seq, 'webhook-id' => $id, 'webhook-timestamp' => $ts,
	    'webhook-signature' => $sigs, 'content-type' => $ctype,
	    'verdict' => $verdict, 'why' => $why,
	], JSON_UNESCAPED_SLASHES) . "\n");
	rename("$cap/$seq.json.tmp", "$cap/$seq.json");

	$done = function (int $code) use ($db, $seq) {
		$db->prepare('UPDATE requests SET status = ?, finished = ?
		    WHERE seq = ?')->execute([$code, microtime(true), $seq]);
	};
	if ($why !== null) {
		$done(401);
		reply(401, ['error' => 'invalid_signature']);
		exit;
	}
	// An id is a file name here: only the characters of one.
	$safe = preg_match('/^[A-Za-z0-9_.-]{1,200}$/', $id) === 1 &&
	    $id[0] !== '.';

	// 3. The test's markers.
	if ($safe && is_readable("$dir/slow-$id")) {
		$secs = (int)trim((string)@file_get_contents("$dir/slow-$id"));
		if (@unlink("$dir/slow-$id"))
			sleep($secs > 0 ? $secs : 3);
	}
	if (file_exists("$dir/delay"))
		usleep(50000);
	$nofail = file_exists("$dir/nofail") ||
	    ($safe && file_exists("$dir/nofail-$id"));
	if (!$nofail) {
		$st = $db->prepare("SELECT count(*) FROM requests
		    WHERE webhook_id = ? AND verdict = 'accepted'");
		$st->execute([$id]);
		if ((int)$st->fetchColumn() <= 2) {
			$done(500);
			reply(500, ['error' => 'failing_on_purpose']);
			exit;
		}
	}

	$code = 200;
	if ($safe && is_readable("$dir/code-$id"))
		$code = (int)trim(file_get_contents("$dir/code-$id"));
	if ($code < 200 || $code > 299) {
		$done($code);
		if ($code >= 300 && $code < 400)
			header('Location: /receiver.php');
		reply($code, ['error' => 'answering_on_purpose']);
		exit;
	}

	// 4. Deduplicate and do the effect, in one transaction: the shipped
	// receiver's outbox_once().
	$db->exec('CREATE TABLE IF NOT EXISTS outbox_seen (
	    id VARCHAR(64) PRIMARY KEY, type VARCHAR(128), seen_at INTEGER)');
	$new = outbox_once($db, $id, is_array($ev) ? (string)($ev['type'] ??
	    '') : '', function (PDO $db) use ($id, $seq, $order, $ev) {
		$db->prepare('INSERT INTO effects (webhook_id, seq, order_id,
		    event_key, amount) VALUES (?, ?, ?, ?, ?)')->execute([$id,
		    $seq, $order, is_array($ev) ? ($ev['event_key'] ?? null) :
		    null, is_array($ev) ? ($ev['amount'] ?? null) : null]);
	});
	$done($code);
	if ($code === 204)
		http_response_code(204);
	else
		reply($code, ['ok' => true, 'duplicate' => !$new]);
} catch (Throwable $e) {
	error_log('receiver.php: ' . $e->getMessage());
	reply(500, ['error' => 'receiver_failed']);
}
