// SPDX-License-Identifier: MIT
'use strict';
// The minimal Node peer of bench/run.sh: the Stripe handler a site owner
// would write with express and better-sqlite3, one process, not
// oncehook's work re-done (that is server.js).
//
//   node minimal.js --listen 127.0.0.1:PORT
//
// Configured by ONCEHOOK_DB (made by "oncehook init", plus
// bench/peers/minimal.sql), ONCEHOOK_STRIPE_SECRET,
// ONCEHOOK_STRIPE_TOLERANCE, ONCEHOOK_SYNCHRONOUS,
// ONCEHOOK_BUSY_TIMEOUT_MS.  Verify Stripe-Signature (HMAC-SHA256 over
// "t.body", timingSafeEqual, the timestamp's tolerance), JSON.parse the
// body, and in one BEGIN IMMEDIATE transaction record the event id in
// processed_events (ON CONFLICT DO NOTHING) and, if it went in, insert
// the order (six columns).  200 {"status":"processed"}; a known id 200
// {"status":"already_processed"}; a bad signature 401.

const crypto = require('node:crypto');
const Database = require('better-sqlite3');
const express = require('express');

const i = process.argv.indexOf('--listen');
const [host, port] = (i > 0 ? process.argv[i + 1] : '127.0.0.1:3000')
    .split(':');
const env = process.env;
const secret = env.ONCEHOOK_STRIPE_SECRET;
const tolerance = Number(env.ONCEHOOK_STRIPE_TOLERANCE || 300);

const db = new Database(env.ONCEHOOK_DB, {
	timeout: Number(env.ONCEHOOK_BUSY_TIMEOUT_MS || 5000),
});
db.pragma('journal_mode = WAL');
db.pragma('synchronous = ' +
    (env.ONCEHOOK_SYNCHRONOUS === 'normal' ? 'NORMAL' : 'FULL'));
const insertEvent = db.prepare('INSERT INTO processed_events (event_id, ' +
    'type, received_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING');
const insertOrder = db.prepare('INSERT INTO orders (id, amount, ' +
    'currency, paid_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)');
// True if the event was new.
const handle = db.transaction((ev, now) => {
	if (insertEvent.run(ev.id, String(ev.type ?? ''), now).changes === 0)
		return false;
	const o = (ev.data && ev.data.object) || {};
	insertOrder.run((o.metadata && o.metadata.order_id) ?? ev.id,
	    o.amount ?? null, o.currency ?? null, now, now, now);
	return true;
});

function verified(header, body) {
	let t = null;
	const v1 = [];
	for (const kv of (header || '').split(',')) {
		const [k, v] = kv.split('=', 2);
		if (k === 't')
			t = v;
		else if (k === 'v1')
			v1.push(v);
	}
	if (t === null ||
	    !(Math.abs(Date.now() / 1000 - Number(t)) <= tolerance))
		return false;
	const expect = crypto.createHmac('sha256', secret)
	    .update(t + '.').update(body).digest();
	return v1.some((sig) => {
		const got = Buffer.from(sig || '', 'hex');
		return got.length === expect.length &&
		    crypto.timingSafeEqual(got, expect);
	});
}

const app = express();
app.post('/hooks/stripe', express.raw({ type: 'application/json' }),
    (req, res) => {
	const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
	if (!verified(req.get('stripe-signature'), body))
		return res.status(401).json({ error: 'invalid_signature' });
	let ev;
	try {
		ev = JSON.parse(body);
	} catch (e) {
		ev = null;
	}
	if (ev === null || typeof ev.id !== 'string')
		return res.status(400).json({ error: 'bad_event' });
	let isNew;
	try {
		isNew = handle.immediate(ev, Math.floor(Date.now() / 1000));
	} catch (e) {
		return res.status(503).json({ error: 'unavailable' });
	}
	res.json({ status: isNew ? 'processed' : 'already_processed' });
});
app.listen(Number(port), host);
