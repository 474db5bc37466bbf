// SPDX-License-Identifier: MIT
// oncehook tests (tests/providers.sh): does a provider's own library
// accept what "oncehook sign" prints?
//
//   node verify.mjs LIB SECRET PAYLOAD_FILE HEADERS_FILE [URL]
//
// LIB is stripe, standardwebhooks, svix (the standardwebhooks library on
// Svix's svix- headers), octokit, razorpay, twilio (validateRequest
// over the form's parameters) or square (WebhooksHelper.verifySignature);
// the last two check the signature against URL, the endpoint's public
// URL.  The public-key schemes' libraries: discord-interactions
// (verifyKey), telnyx (TelnyxWebhook.verify, which also refuses a
// timestamp 5 minutes off), @sendgrid/eventwebhook (verifySignature);
// SECRET is then the public key in the provider's form.  And v1a:
// Standard Webhooks' Ed25519 entries, which the standardwebhooks library
// does not verify (v1 only), checked with node:crypto against the whpk_
// key.  HEADERS_FILE is the output of
// "oncehook sign": one "Name: value" a line.  The payload is passed to
// the library as the exact bytes of the file (as a string, which is
// what these libraries take).  Exit 0 if the library's verify function
// accepts it, 1 if it refuses it (its message on stdout), 2 on a usage
// error.

import { readFileSync } from "node:fs";
import Stripe from "stripe";
import { Webhook } from "standardwebhooks";
import { verify as octokitVerify } from "@octokit/webhooks-methods";
import Razorpay from "razorpay";
import twilio from "twilio";
import { WebhooksHelper } from "square";
import { createPublicKey, verify as cryptoVerify } from "node:crypto";
import { verifyKey } from "discord-interactions";
import { TelnyxWebhook } from "telnyx/lib/webhooks";
import sendgrid from "@sendgrid/eventwebhook";

const [lib, secret, payloadFile, headersFile, url] = process.argv.slice(2);
if (!headersFile) {
	console.error("usage: node verify.mjs LIB SECRET PAYLOAD HEADERS");
	process.exit(2);
}
const payload = readFileSync(payloadFile, "utf8");

// Header names lower-cased, as a Node.js server hands them over.
const headers = {};
for (const line of readFileSync(headersFile, "utf8").split("\n")) {
	const i = line.indexOf(":");
	if (i > 0)
		headers[line.slice(0, i).trim().toLowerCase()] =
		    line.slice(i + 1).trim();
}

function refused(why) {
	console.log(`refused: ${why}`);
	process.exit(1);
}

try {
	switch (lib) {
	case "stripe": {
		// constructEvent throws unless a v1 signature matches and t
		// is within the default tolerance (300 s) of now.
		const stripe = new Stripe("sk_test_unused_no_api_call");
		stripe.webhooks.constructEvent(payload,
		    headers["stripe-signature"], secret);
		break;
	}
	case "standardwebhooks":
		// verify throws unless a v1 signature matches and the
		// timestamp is within 5 minutes of now.
		new Webhook(secret).verify(payload, headers);
		break;
	case "svix":
		// Svix's scheme is Standard Webhooks' under svix- names;
		// this library reads the webhook- names.
		new Webhook(secret).verify(payload, {
			"webhook-id": headers["svix-id"],
			"webhook-timestamp": headers["svix-timestamp"],
			"webhook-signature": headers["svix-signature"],
		});
		break;
	case "octokit":
		if (!(await octokitVerify(secret, payload,
		    headers["x-hub-signature-256"])))
			refused("verify() returned false");
		break;
	case "razorpay":
		// validateWebhookSignature compares the hex HMAC-SHA256 of
		// the body with X-Razorpay-Signature; it has no timestamp.
		if (!Razorpay.validateWebhookSignature(payload,
		    headers["x-razorpay-signature"], secret))
			refused("validateWebhookSignature() returned false");
		break;
	case "twilio": {
		// The form's parameters as an Express app hands them to
		// validateRequest: a name sent twice is an array.
		const params = {};
		for (const [k, v] of new URLSearchParams(payload))
			params[k] = k in params ? [].concat(params[k], v) : v;
		if (!twilio.validateRequest(secret,
		    headers["x-twilio-signature"], url, params))
			refused("validateRequest() returned false");
		break;
	}
	case "square":
		if (!(await WebhooksHelper.verifySignature({
			requestBody: payload,
			signatureHeader: headers["x-square-hmacsha256-signature"],
			signatureKey: secret,
			notificationUrl: url,
		})))
			refused("verifySignature() returned false");
		break;
	case "discord-interactions":
		if (!(await verifyKey(payload, headers["x-signature-ed25519"],
		    headers["x-signature-timestamp"], secret)))
			refused("verifyKey() returned false");
		break;
	case "telnyx":
		await new TelnyxWebhook(secret).verify(payload, headers);
		break;
	case "@sendgrid/eventwebhook": {
		const ew = new sendgrid.EventWebhook();
		if (!ew.verifySignature(ew.convertPublicKeyToECDSA(secret),
		    payload,
		    headers["x-twilio-email-event-webhook-signature"],
		    headers["x-twilio-email-event-webhook-timestamp"]))
			refused("verifySignature() returned false");
		break;
	}
	case "v1a": {
		// The raw key as an SPKI: its fixed Ed25519 prefix, then it.
		const key = createPublicKey({ format: "der", type: "spki",
		    key: Buffer.concat([
		    Buffer.from("302a300506032b6570032100", "hex"),
		    Buffer.from(secret.replace(/^whpk_/, ""), "base64")]) });
		const msg = `${headers["webhook-id"]}.` +
		    `${headers["webhook-timestamp"]}.${payload}`;
		if (!headers["webhook-signature"].split(" ").some((e) =>
		    e.startsWith("v1a,") && cryptoVerify(null,
		    Buffer.from(msg, "utf8"), key,
		    Buffer.from(e.slice(4), "base64"))))
			refused("no v1a signature matched");
		break;
	}
	default:
		console.error(`verify.mjs: unknown library ${lib}`);
		process.exit(2);
	}
} catch (e) {
	refused(e.message.split("\n")[0]);
}
console.log("accepted");
process.exit(0);
