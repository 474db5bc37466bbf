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
//    variables (URL, ...) by suffix}
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
