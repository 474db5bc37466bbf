// SPDX-License-Identifier: MIT
'use strict';
// The Node peer of bench/run.sh: oncehook's work for one Stripe endpoint,
// as a Node site would write it, with express and better-sqlite3.
//
//   node server.js --listen 127.0.0.1:PORT [--workers N]
//
// N processes (node:cluster; the primary hands out connections and
// serves none), each with its own connection and prepared statements.
// Configured by the same variables as oncehook: ONCEHOOK_DB (a database
// made by "oncehook init": the same tables and indexes),
// ONCEHOOK_STRIPE_SECRET, ONCEHOOK_STRIPE_TOLERANCE,
// ONCEHOOK_SYNCHRONOUS, ONCEHOOK_BUSY_TIMEOUT_MS.
//
// The same work as oncehook and bench/peers/php/hook.php: verify
// Stripe-Signature (HMAC-SHA256 over "t.body", constant-time compare,
// timestamp tolerance), parse the JSON, answer a known event from a
// read; otherwise, in one BEGIN IMMEDIATE transaction, claim the event
// id in events and insert the order row with orders.sql's statement.
// Differences (bench/README.md): the payload hash is the SHA-256 of
// the body as received; no log line per request; better-sqlite3 brings
// its own SQLite, compiled with its own options.

const cluster = require('node:cluster');
const crypto = require('node:crypto');

function arg(name, dflt) {
	const i = process.argv.indexOf(name);
	return i > 0 ? process.argv[i + 1] : dflt;
}

const [host, port] = arg('--listen', '127.0.0.1:3000').split(':');
const workers = Number(arg('--workers', '1'));
const env = process.env;

if (cluster.isPrimary && workers > 1) {
	for (let i = 0; i < workers; i++)
		cluster.fork();
	cluster.on('exit', (w, code) => {
		if (!w.exitedAfterDisconnect)
			console.error(`worker ${w.process.pid} exited ${code}`);
	});
	process.on('SIGTERM', () => {
		for (const id in cluster.workers)
			cluster.workers[id].kill('SIGTERM');
		process.exit(0);
	});
} else {
	serve();
}

function serve() {
	const Database = require('better-sqlite3');
	const express = require('express');
	const secret = env.ONCEHOOK_STRIPE_SECRET;
	const tolerance = Number(env.ONCEHOOK_STRIPE_TOLERANCE || 300);
	const db = new Database(env.ONCEHOOK_DB, {
		fileMustExist: true,
		timeout: Number(env.ONCEHOOK_BUSY_TIMEOUT_MS || 5000),
	});
	db.pragma('journal_mode = WAL');
	db.pragma('synchronous = ' +
	    (env.ONCEHOOK_SYNCHRONOUS === 'normal' ? 'NORMAL' : 'FULL'));
	const lookup = db.prepare('SELECT payload_hash FROM events ' +
	    'WHERE endpoint = ? AND key = ?').pluck();
	const insertEvent = db.prepare('INSERT INTO events (endpoint, key, ' +
	    'type, payload_hash, payload, received_at, processed_at, ' +
	    'expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ' +
	    'ON CONFLICT (endpoint, key) DO NOTHING');
	// sql/actions/orders.sql, "-- on: payment_intent.succeeded".
	const insertOrder = db.prepare(`
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
    updated_at = excluded.updated_at`);
	// Returns true if the event was new.
	const claim = db.transaction((key, type, hash, payload, now) => {
		if (insertEvent.run('stripe', key, type, hash, payload, now,
		    now, now + 30 * 86400).changes === 0)
			return false;
		if (type === 'payment_intent.succeeded')
			insertOrder.run({ payload, received_at: now });
		return true;
	});

	const app = express();
	app.disable('x-powered-by');
	app.disable('etag');
	app.post('/hooks/stripe', express.raw({ type: () => true,
	    limit: '1mb' }), (req, res) => {
		const body = Buffer.isBuffer(req.body) ? req.body :
		    Buffer.alloc(0);
		let t = null;
		const v1 = [];
		for (const kv of (req.get('stripe-signature') || '')
		    .split(',')) {
			const i = kv.indexOf('=');
			if (i < 0)
				continue;
			const k = kv.slice(0, i), v = kv.slice(i + 1);
			if (k === 't')
				t = v;
			else if (k === 'v1')
				v1.push(v);
		}
		if (t === null || !/^[0-9]+$/.test(t) || v1.length === 0)
			return res.status(401).json({
			    error: 'invalid_signature' });
		const expect = crypto.createHmac('sha256', secret)
		    .update(t + '.').update(body).digest();
		let ok = false;
		for (const sig of v1) {
			const got = Buffer.from(sig, 'hex');
			if (got.length === expect.length &&
			    crypto.timingSafeEqual(got, expect))
				ok = true;
		}
		if (!ok)
			return res.status(401).json({
			    error: 'invalid_signature' });
		const now = Math.floor(Date.now() / 1000);
		if (Math.abs(now - Number(t)) > tolerance)
			return res.status(400).json({
			    error: 'stale_timestamp' });
		let ev;
		try {
			ev = JSON.parse(body.toString('utf8'));
		} catch (e) {
			return res.status(400).json({
			    error: 'malformed_json' });
		}
		if (ev === null || typeof ev !== 'object' ||
		    typeof ev.id !== 'string')
			return res.status(400).json({ error: 'missing_key' });
		const key = ev.id;
		const type = typeof ev.type === 'string' ? ev.type : null;
		const hash = crypto.createHash('sha256').update(body)
		    .digest('hex');
		const payload = body.toString('utf8');
		try {
			const known = lookup.get('stripe', key);
			if (known === undefined &&
			    claim.immediate(key, type, hash, payload, now))
				return res.json({ status: 'processed', key });
			if (known !== undefined && known !== hash)
				return res.status(422).json({
				    error: 'key_conflict', key });
			res.set('Idempotent-Replayed', 'true');
			return res.json({ status: 'already_processed', key });
		} catch (e) {
			res.set('Retry-After', '5');
			return res.status(503).json({ error: 'unavailable' });
		}
	});
	app.listen(Number(port), host);
}
