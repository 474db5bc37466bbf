// SPDX-License-Identifier: MIT
// oncehook tests (tests/outbox.sh): does the Standard Webhooks library
// accept what oncehook's outbox sent, as the PHP receiver did?
//
//   node verify-outbox.mjs CAPTURE_DIR SECRET ACCEPTED REFUSED
//
// CAPTURE_DIR is the PHP receiver's captures/ (tests/outbox/receiver.php):
// for each request, <seq>.json (webhook-id, webhook-timestamp,
// webhook-signature, the receiver's verdict) and <seq>.body (the raw
// body).  SECRET is the outbox secret (whsec_ and base64).  ACCEPTED
// and REFUSED are the counts of the receiver's own database: the
// captures must hold exactly that many of each.
//
// Prints TAP lines without numbers ("ok - ..."), renumbered by the
// caller:
//   - the captures hold ACCEPTED accepted and REFUSED refused requests
//   - the library's verify accepts every request the receiver accepted
//   - it refuses every request the receiver refused
//   - it refuses every accepted request once its body is changed (one
//     byte added), and once its webhook-id is changed
// Exit 0 if all passed, 1 if one failed, 2 on a usage error.

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";

const [dir, secret, accepted, refused] = process.argv.slice(2);
if (refused === undefined) {
	console.error("usage: node verify-outbox.mjs DIR SECRET ACCEPTED REFUSED");
	process.exit(2);
}

let failed = 0;
function check(ok, text, detail) {
	console.log(`${ok ? "ok" : "not ok"} - ${text}`);
	if (!ok) {
		failed++;
		for (const line of detail ?? [])
			console.log(`#   ${line}`);
	}
}

const wh = new Webhook(secret);
function verify(body, meta, id) {
	try {
		wh.verify(body, {
			"webhook-id": id ?? meta["webhook-id"],
			"webhook-timestamp": meta["webhook-timestamp"],
			"webhook-signature": meta["webhook-signature"],
		});
		return null;
	} catch (e) {
		return `${e.name}: ${e.message}`;
	}
}

const caps = readdirSync(dir).filter((f) => /^[0-9]+\.json$/.test(f))
    .map((f) => {
	const meta = JSON.parse(readFileSync(join(dir, f), "utf8"));
	const body = readFileSync(join(dir, `${meta.seq}.body`), "utf8");
	return { meta, body };
    })
    .sort((a, b) => a.meta.seq - b.meta.seq);
const acc = caps.filter((c) => c.meta.verdict === "accepted");
const ref = caps.filter((c) => c.meta.verdict === "refused");

check(acc.length === Number(accepted) && ref.length === Number(refused) &&
    acc.length + ref.length === caps.length && acc.length > 0,
    `the captures hold the receiver's ${accepted} accepted and ` +
    `${refused} refused requests`,
    [`found ${acc.length} accepted, ${ref.length} refused, ` +
     `${caps.length} in all`]);

const notVerified = [];
for (const c of acc) {
	const why = verify(c.body, c.meta);
	if (why !== null)
		notVerified.push(`#${c.meta.seq} ${c.meta["webhook-id"]}: ${why}`);
}
check(notVerified.length === 0, `standardwebhooks verifies all ` +
    `${acc.length} requests the PHP receiver accepted`, notVerified);

const notRefused = [];
for (const c of ref) {
	if (verify(c.body, c.meta) === null)
		notRefused.push(`#${c.meta.seq} ${c.meta["webhook-id"]}: ` +
		    `verified (receiver: ${c.meta.why})`);
}
check(notRefused.length === 0, `standardwebhooks refuses all ` +
    `${ref.length} requests the PHP receiver refused`, notRefused);

const tamperedBody = [];
const tamperedId = [];
for (const c of acc) {
	if (verify(c.body + " ", c.meta) === null)
		tamperedBody.push(`#${c.meta.seq} verified with a byte added`);
	if (verify(c.body, c.meta, c.meta["webhook-id"] + "x") === null)
		tamperedId.push(`#${c.meta.seq} verified with another id`);
}
check(acc.length > 0 && tamperedBody.length === 0,
    `standardwebhooks refuses each of the ${acc.length} accepted ` +
    `requests with its body changed`, tamperedBody);
check(acc.length > 0 && tamperedId.length === 0,
    `standardwebhooks refuses each of the ${acc.length} accepted ` +
    `requests with its webhook-id changed`, tamperedId);

process.exit(failed ? 1 : 0);
