// SPDX-License-Identifier: MIT
// oncehook tests (tests/schemes.sh, through tests/e2e/schemes.py):
// deliveries signed by the providers' own libraries, in one batch.
//
//   node sign.mjs < jobs.json > signed.json
//
// jobs.json is a JSON array of jobs, each
//   {"signer": NAME, "secret": ..., "id": 32 hex digits, "uuid": the
//    same as a UUID, "ts": Unix seconds, "body": the payload,
//    "event": an event type or null, "env": the endpoint's extra
//    variables (URL, ...) by suffix; for the public-key schemes
//    "secret" is the PEM private key and "public" its public key in
//    the form the provider shows it}
// and signed.json the array of what each job gives back, in order:
//   {"headers": {name: value, ...}, "body": the body to send, when the
//    signature lives in it (else the job's body is sent as it is)}.
// A signer is one entry of SIGNERS below, named by a row of the table
// in tests/e2e/schemes.py ("npm:NAME"): a scheme signed by a library
// of tests/node/package.json adds its entry here.  Exits 0, or 2 on an
// unknown signer or a library's throw (the message on stderr).

import Stripe from "stripe";
import { Webhook } from "standardwebhooks";
import { sign as octokitSign } from "@octokit/webhooks-methods";
import adyen from "@adyen/api-library";
import { createPrivateKey, sign as cryptoSign } from "node:crypto";
import { verifyKey } from "discord-interactions";
import { TelnyxWebhook } from "telnyx/lib/webhooks";
import sendgrid from "@sendgrid/eventwebhook";

const stripe = new Stripe("sk_test_unused_no_api_call");

// Standard Webhooks' own sign(), under the header prefix of a sender.
function standard(prefix, j) {
	const msgId = `msg_${j.id}`;
	return {
		headers: {
			[`${prefix}-id`]: msgId,
			[`${prefix}-timestamp`]: String(j.ts),
			[`${prefix}-signature`]: new Webhook(j.secret)
			    .sign(msgId, new Date(j.ts * 1000), j.body),
		},
	};
}

const SIGNERS = {
	// stripe.webhooks.generateTestHeaderString: how Stripe's library
	// signs a test event (scheme v1) at a given time.
	stripe: (j) => ({
		headers: {
			"Stripe-Signature": stripe.webhooks
			    .generateTestHeaderString({ payload: j.body,
			    secret: j.secret, timestamp: j.ts }),
		},
	}),
	standardwebhooks: (j) => standard("webhook", j),
	// Svix signs as Standard Webhooks does, under svix- names.
	svix: (j) => standard("svix", j),
	// @octokit/webhooks-methods' sign, with the headers GitHub sends
	// beside the signature.
	octokit: async (j) => ({
		headers: {
			"X-GitHub-Delivery": j.uuid,
			"X-GitHub-Event": j.event || "ping",
			"X-GitHub-Hook-ID": "12345678",
			"X-Hub-Signature-256": await octokitSign(j.secret, j.body),
		},
	}),
	// @adyen/api-library's HmacValidator.calculateHmac over each item
	// of notificationItems, its signature put where Adyen puts it
	// (additionalData.hmacSignature): the body carries the signatures.
	adyen: (j) => {
		const v = new adyen.hmacValidator();
		const b = JSON.parse(j.body);
		for (const it of b.notificationItems) {
			const n = it.NotificationRequestItem;
			n.additionalData = Object.assign({}, n.additionalData, {
				hmacSignature: v.calculateHmac(n, j.secret),
			});
		}
		return { headers: {}, body: JSON.stringify(b) };
	},
};

// The public-key schemes: Discord, Telnyx and SendGrid publish a verify
// function only (their servers sign).  The delivery is signed with
// node:crypto and must pass the provider's own verify before it is sent,
// which proves the test signer signs as the provider does.
function pkSign(j, alg, msg) {
	return cryptoSign(alg, Buffer.from(msg, "utf8"),
	    createPrivateKey(j.secret));
}

function mustVerify(name, ok) {
	if (!ok)
		throw new Error(`${name} refuses what sign.mjs signed`);
}

// Telnyx's verify compares the timestamp with its clock: it is asked at
// the signing time (the stale delivery's too).
async function atTime(ts, f) {
	const now = Date.now;
	Date.now = () => ts * 1000;
	try {
		return await f();
	} finally {
		Date.now = now;
	}
}

Object.assign(SIGNERS, {
	// Ed25519 over timestamp || body, hex; discord-interactions'
	// verifyKey must accept it.
	"discord-interactions": async (j) => {
		const ts = String(j.ts);
		const sig = pkSign(j, null, ts + j.body).toString("hex");
		mustVerify("discord-interactions verifyKey",
		    await verifyKey(j.body, sig, ts, j.public));
		return { headers: { "X-Signature-Ed25519": sig,
		    "X-Signature-Timestamp": ts } };
	},
	// Ed25519 over "timestamp|body", base64; TelnyxWebhook.verify
	// throws unless it matches.
	telnyx: async (j) => {
		const ts = String(j.ts);
		const headers = {
			"telnyx-signature-ed25519": pkSign(j, null,
			    `${ts}|${j.body}`).toString("base64"),
			"telnyx-timestamp": ts,
		};
		await atTime(j.ts, () =>
		    new TelnyxWebhook(j.public).verify(j.body, headers));
		return { headers };
	},
	// ECDSA P-256 SHA-256 over timestamp || body, DER in base64;
	// @sendgrid/eventwebhook's verifySignature must accept it.
	"@sendgrid/eventwebhook": (j) => {
		const ts = String(j.ts);
		const sig = pkSign(j, "sha256", ts + j.body).toString("base64");
		const ew = new sendgrid.EventWebhook();
		mustVerify("@sendgrid/eventwebhook verifySignature",
		    ew.verifySignature(ew.convertPublicKeyToECDSA(j.public),
		    j.body, sig, ts));
		return { headers: {
		    "X-Twilio-Email-Event-Webhook-Signature": sig,
		    "X-Twilio-Email-Event-Webhook-Timestamp": ts } };
	},
});

let input = "";
for await (const chunk of process.stdin)
	input += chunk;
const out = [];
try {
	for (const j of JSON.parse(input)) {
		const f = SIGNERS[j.signer];
		if (!f)
			throw new Error(`no signer ${j.signer} in sign.mjs`);
		out.push(await f(j));
	}
} catch (e) {
	console.error(`sign.mjs: ${e && e.stack ? e.stack : e}`);
	process.exit(2);
}
process.stdout.write(JSON.stringify(out));
