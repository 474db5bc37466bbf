// SPDX-License-Identifier: MIT
// oncehook tests (tests/providers.sh): deliveries signed by the
// providers' own libraries, sent to oncehook behind a real web server.
//
//   node deliver.mjs BASE_URL
//
// BASE_URL is where the endpoints live (http://127.0.0.1:PORT/hooks);
// the secrets come from the environment: STRIPE_SECRET, STANDARD_SECRET,
// SVIX_SECRET, GITHUB_SECRET, RAZORPAY_SECRET, TWILIO_SECRET,
// SQUARE_SECRET (those of the endpoints stripe, standard, svix, github,
// razorpay, twilio and square), and TWILIO_URL, SQUARE_URL: the public
// URLs those two endpoints are configured with (ONCEHOOK_<NAME>_URL),
// which the providers sign, whatever URL the request is sent to.  For
// each library: the first delivery must be answered 200 processed, the
// same delivery again 200 already_processed, and the body changed under
// the same headers 401.
// Prints "ok - ..." / "not ok - ..." lines for the shell to number;
// exits 0, or 1 if a check failed, 2 on a usage error, 3 if something
// threw (a connection refused, say).

import { createHash, createHmac, randomUUID } from "node:crypto";
import Razorpay from "razorpay";
import Stripe from "stripe";
import { Webhook } from "standardwebhooks";
import { sign as octokitSign } from "@octokit/webhooks-methods";
import twilio from "twilio";
import { WebhooksHelper } from "square";

const base = process.argv[2];
const env = (name) => {
	const v = process.env[name];
	if (!v) {
		console.error(`deliver.mjs: ${name} is not set`);
		process.exit(2);
	}
	return v;
};
if (!base) {
	console.error("usage: node deliver.mjs BASE_URL");
	process.exit(2);
}

let failed = 0;

// POST body to the endpoint with headers; status and JSON body back.
async function post(endpoint, body, headers, type = "application/json") {
	const r = await fetch(`${base}/${endpoint}`, {
		method: "POST",
		headers: { "Content-Type": type, ...headers },
		body,
	});
	const text = await r.text();
	let json = null;
	try {
		json = JSON.parse(text);
	} catch {
		// reported by the check
	}
	return { status: r.status, json, text };
}

function check(what, r, status, fields) {
	const bad = [];
	if (r.status !== status)
		bad.push(`status ${r.status}, want ${status}`);
	for (const [k, v] of Object.entries(fields))
		if (!r.json || r.json[k] !== v)
			bad.push(`${k}: ${JSON.stringify(r.json && r.json[k])}, ` +
			    `want ${JSON.stringify(v)}`);
	if (bad.length === 0) {
		console.log(`ok - ${what}`);
		return;
	}
	failed++;
	console.log(`not ok - ${what}`);
	for (const b of bad)
		console.log(`#   ${b}`);
	console.log(`#   response: ${r.status} ${r.text.slice(0, 300)}`);
}

// The three deliveries of one library: first, again, tampered.
async function deliveries(lib, endpoint, body, headers, key) {
	check(`${lib} -> /${endpoint}: first delivery -> 200 processed`,
	    await post(endpoint, body, headers), 200,
	    { status: "processed", key });
	check(`${lib} -> /${endpoint}: same delivery again -> 200 ` +
	    "already_processed", await post(endpoint, body, headers), 200,
	    { status: "already_processed", key });
	const tampered = body.replace(/"livemode": ?false/,
	    "\"livemode\":true");
	if (tampered === body)
		throw new Error("the payload has no livemode to tamper with");
	check(`${lib} -> /${endpoint}: tampered body, same headers -> 401`,
	    await post(endpoint, tampered, headers), 401,
	    { error: "invalid_signature" });
}

const tag = `${Date.now()}_${process.pid}`;

// A throw at the top level (a rejected await) is an uncaught exception.
for (const ev of ["uncaughtException", "unhandledRejection"])
	process.on(ev, (e) => {
		console.log(`# deliver.mjs: ${e && e.stack ? e.stack : e}`);
		process.exit(3);
	});

// stripe: stripe.webhooks.generateTestHeaderString, the way Stripe's
// own library signs a test event (timestamp now, scheme v1).
{
	const stripe = new Stripe("sk_test_unused_no_api_call");
	const id = `evt_lib_${tag}`;
	const payload = JSON.stringify({
		id, object: "event", type: "customer.created",
		livemode: false, data: { object: { id: "cus_lib" } },
	}, null, 2);
	const header = stripe.webhooks.generateTestHeaderString({
		payload, secret: env("STRIPE_SECRET"),
	});
	await deliveries("stripe", "stripe", payload,
	    { "Stripe-Signature": header }, id);
}

// standardwebhooks: new Webhook(secret).sign(msgId, date, payload).
{
	const msgId = `msg_lib_${tag}`;
	const now = new Date();
	const payload = JSON.stringify({
		type: "invoice.paid", livemode: false,
		timestamp: now.toISOString(), data: { id: "inv_lib" },
	});
	const signature = new Webhook(env("STANDARD_SECRET"))
	    .sign(msgId, now, payload);
	await deliveries("standardwebhooks", "standard", payload, {
		"webhook-id": msgId,
		"webhook-timestamp": String(Math.floor(now / 1000)),
		"webhook-signature": signature,
	}, msgId);

	// Svix signs the same way under svix- header names.
	const svixId = `msg_svix_${tag}`;
	const svixSig = new Webhook(env("SVIX_SECRET"))
	    .sign(svixId, now, payload);
	await deliveries("standardwebhooks (svix- headers)", "svix", payload, {
		"svix-id": svixId,
		"svix-timestamp": String(Math.floor(now / 1000)),
		"svix-signature": svixSig,
	}, svixId);
}

// @octokit/webhooks-methods: sign(secret, payload), "sha256=<hex>"; the
// delivery id and event name are the headers GitHub adds beside it.
{
	const delivery = randomUUID();
	const payload = JSON.stringify({
		zen: "Design for failure.", hook_id: 1, livemode: false,
	});
	const signature = await octokitSign(env("GITHUB_SECRET"), payload);
	await deliveries("@octokit/webhooks-methods", "github", payload, {
		"X-GitHub-Delivery": delivery,
		"X-GitHub-Event": "ping",
		"X-Hub-Signature-256": signature,
	}, delivery);
}

// razorpay: the library has no signing function, only its check,
// Razorpay.validateWebhookSignature(body, signature, secret): the
// delivery is signed as that check computes (hex HMAC-SHA256 of the
// body) and sent only once the check accepts it.
{
	const secret = env("RAZORPAY_SECRET");
	const eventId = `evt_lib_${tag}`;
	const payload = JSON.stringify({
		entity: "event", account_id: "acc_lib", event: "payment.captured",
		contains: ["payment"], livemode: false,
		payload: { payment: { entity: { id: "pay_lib", amount: 5000 } } },
		created_at: Math.floor(Date.now() / 1000),
	});
	const signature = createHmac("sha256", secret).update(payload)
	    .digest("hex");
	if (Razorpay.validateWebhookSignature(payload, signature, secret))
		console.log("ok - razorpay: validateWebhookSignature accepts the " +
		    "delivery's signature");
	else {
		failed++;
		console.log("not ok - razorpay: validateWebhookSignature accepts " +
		    "the delivery's signature");
	}
	await deliveries("razorpay", "razorpay", payload, {
		"X-Razorpay-Event-Id": eventId,
		"X-Razorpay-Signature": signature,
	}, eventId);
}

// twilio: getExpectedTwilioSignature(token, url, params), the function
// twilio-node's validateRequest checks with, over the configured public
// URL (not the 127.0.0.1 one the request goes to); the body the form
// Twilio posts, with a name sent twice.
{
	const token = env("TWILIO_SECRET");
	const url = env("TWILIO_URL");
	const idem = `idem_lib_${tag}`;
	const params = {
		MessageSid: `SM${tag}`, MessageStatus: "delivered",
		AccountSid: "AC00000000000000000000000000000000",
		To: "+15005550006", Body: "Zo\u00eb \u2603 100% & more",
		MediaUrl: ["https://a.example/1", "https://a.example/2"],
	};
	const form = (p) => {
		const u = new URLSearchParams();
		for (const [k, v] of Object.entries(p))
			for (const x of [].concat(v))
				u.append(k, x);
		return u.toString();
	};
	const body = form(params);
	const sig = twilio.getExpectedTwilioSignature(token, url, params);
	if (!twilio.validateRequest(token, sig, url, params))
		throw new Error("twilio's validateRequest refuses its own signature");
	const type = "application/x-www-form-urlencoded";
	const h = { "X-Twilio-Signature": sig,
	    "I-Twilio-Idempotency-Token": idem };
	check("twilio -> /twilio: first delivery -> 200 processed",
	    await post("twilio", body, h, type), 200,
	    { status: "processed", key: idem });
	check("twilio -> /twilio: same delivery again -> 200 already_processed",
	    await post("twilio", body, h, type), 200,
	    { status: "already_processed", key: idem });
	check("twilio -> /twilio: MessageStatus changed, same signature -> 401",
	    await post("twilio", form({ ...params, MessageStatus: "failed" }),
	    h, type), 401, { error: "invalid_signature" });
	// A JSON body: Twilio appends bodySHA256 to the URL it signs and
	// calls; validateRequestWithBody checks both.
	const json = JSON.stringify({ MessageSid: `SMjson${tag}`,
	    MessageStatus: "sent", AccountSid: params.AccountSid });
	const sha = createHash("sha256").update(json).digest("hex");
	const jurl = `${url}${url.includes("?") ? "&" : "?"}bodySHA256=${sha}`;
	const jsig = twilio.getExpectedTwilioSignature(token, jurl, {});
	if (!twilio.validateRequestWithBody(token, jsig, jurl, json))
		throw new Error("twilio's validateRequestWithBody refuses it");
	const jh = { "X-Twilio-Signature": jsig,
	    "I-Twilio-Idempotency-Token": `${idem}_json` };
	check("twilio -> /twilio?bodySHA256=...: a JSON body -> 200 processed",
	    await post(`twilio?bodySHA256=${sha}`, json, jh), 200,
	    { status: "processed", key: `${idem}_json` });
	check("twilio -> /twilio?bodySHA256=...: again -> 200 " +
	    "already_processed", await post(`twilio?bodySHA256=${sha}`, json,
	    jh), 200, { status: "already_processed", key: `${idem}_json` });
	check("twilio -> /twilio?bodySHA256=...: another JSON body -> 401",
	    await post(`twilio?bodySHA256=${sha}`, json.replace("sent",
	    "failed"), jh), 401, { error: "invalid_signature" });
	const local = `${base}/twilio`;
	const other = { ...params, MessageStatus: "read" };
	check("twilio -> /twilio: signed for the URL the request reached, " +
	    "not the configured one -> 401",
	    await post("twilio", form(other), {
		"X-Twilio-Signature": twilio.getExpectedTwilioSignature(token,
		    local, other),
		"I-Twilio-Idempotency-Token": `${idem}_local` }, type), 401,
	    { error: "invalid_signature" });
}

// square: its library verifies only (WebhooksHelper.verifySignature):
// the signature is made with node:crypto as Square documents it and
// checked with the library before it is sent.
{
	const key = env("SQUARE_SECRET");
	const url = env("SQUARE_URL");
	const id = `sq_lib_${tag}`;
	const body = JSON.stringify({
		merchant_id: "MLEFBHHSJGVHD", type: "payment.updated",
		event_id: id, created_at: new Date().toISOString(),
		livemode: false, data: { type: "payment", id: "p_lib" },
	});
	const mac = (u) => createHmac("sha256", key).update(u + body)
	    .digest("base64");
	if (!(await WebhooksHelper.verifySignature({ requestBody: body,
	    signatureHeader: mac(url), signatureKey: key,
	    notificationUrl: url })))
		throw new Error("square's verifySignature refuses the signature");
	await deliveries("square (WebhooksHelper-checked)", "square", body,
	    { "x-square-hmacsha256-signature": mac(url) }, id);
	check("square -> /square: signed for the URL the request reached -> 401",
	    await post("square", body.replace(id, `${id}_local`),
	    { "x-square-hmacsha256-signature": createHmac("sha256", key)
	    .update(`${base}/square` + body.replace(id, `${id}_local`))
	    .digest("base64") }), 401, { error: "invalid_signature" });
}

process.exit(failed ? 1 : 0);
