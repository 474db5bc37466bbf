-- SPDX-License-Identifier: MIT
-- bench/run.sh's load for wrk: signed Stripe-like events from a pool made
-- by bench/pool.py (wrk's Lua has no HMAC), with the header of the pool's
-- scheme (Stripe-Signature, or hmac-sha256's X-Webhook-Signature).
--
--   wrk -t T -c C -d S -s bench/wrk.lua URL -- MODE POOLDIR [NDUP]
--
-- MODE new: each request a new event, each pool entry sent once; the
--   entries are dealt to the T threads (entry i to thread i mod T).  A
--   thread that runs out stops, and the summary says "exhausted": the
--   pool was too small for the row (its req/s would be too low).
-- MODE dup: the first NDUP entries, already delivered, sent in turn (a
--   retry answered from a read).
-- MODE any: the whole pool in turn, for a responder that keeps nothing.
-- MODE forged: the first NDUP entries in turn with a wrong signature
--   (a flood of forged requests: each refused 401, nothing stored).
--
-- At the end one line "BENCH {json}": requests, duration, socket errors,
-- latency percentiles (microseconds, wrk's), and the answers counted by
-- body: "processed", "already_processed", any other 200, non-200.

local threads = {}

function setup(thread)
	thread:set("tid", #threads)
	table.insert(threads, thread)
end

function init(args)
	mode, pooldir, ndup = args[1], args[2], tonumber(args[3] or "0")
	nthreads = tonumber(args[4] or "1")
	local f = assert(io.open(pooldir .. "/pool.tmpl"))
	local tmpl = f:read("*l")
	f:close()
	parts = {}
	local from = 1
	while true do
		local a, b = string.find(tmpl, "@ID@", from, true)
		if not a then
			table.insert(parts, string.sub(tmpl, from))
			break
		end
		table.insert(parts, string.sub(tmpl, from, a - 1))
		from = b + 1
	end
	f = assert(io.open(pooldir .. "/pool.ts"))
	ts = f:read("*l")
	f:close()
	-- pool.py's scheme: stripe unless the pool says hmac-sha256.
	f = io.open(pooldir .. "/pool.scheme")
	scheme = f and f:read("*l") or "stripe"
	if f then
		f:close()
	end
	ids, sigs = {}, {}
	local i = 0
	for line in io.lines(pooldir .. "/pool.ids") do
		if mode ~= "new" or i % nthreads == tid then
			ids[#ids + 1] = string.sub(line, 1, 16)
			sigs[#sigs + 1] = string.sub(line, 18)
		end
		i = i + 1
		if (mode == "dup" or mode == "forged") and i >= ndup then
			break
		end
	end
	if mode == "forged" then
		for k = 1, #sigs do
			sigs[k] = string.rep("0", 64)
		end
	end
	next_i = 1
	processed, replayed, other200, non200, exhausted = 0, 0, 0, 0, 0
	dupreqs = {}
end

local function make(i)
	local id = ids[i]
	local body = table.concat(parts, id)
	local h = { ["Content-Type"] = "application/json" }
	if scheme == "hmac-sha256" then
		h["X-Webhook-Signature"] = "sha256=" .. sigs[i]
	else
		h["Stripe-Signature"] = "t=" .. ts .. ",v1=" .. sigs[i]
	end
	return wrk.format("POST", nil, h, body)
end

function request()
	local i = next_i
	if i > #ids then
		if mode == "new" then
			exhausted = 1
			wrk.thread:stop()
			i = #ids
		else
			i = 1
		end
	end
	next_i = i + 1
	if mode ~= "new" then
		local r = dupreqs[i]
		if not r then
			r = make(i)
			dupreqs[i] = r
		end
		return r
	end
	return make(i)
end

function response(status, headers, body)
	if status ~= 200 then
		non200 = non200 + 1
	elseif string.find(body, '"status":"processed"', 1, true) then
		processed = processed + 1
	elseif string.find(body, '"status":"already_processed"', 1, true) then
		replayed = replayed + 1
	else
		other200 = other200 + 1
	end
end

function done(summary, latency, requests)
	local c = { processed = 0, replayed = 0, other200 = 0, non200 = 0,
	    exhausted = 0 }
	for _, t in ipairs(threads) do
		for k, _ in pairs(c) do
			c[k] = c[k] + (t:get(k) or 0)
		end
	end
	local e = summary.errors
	io.write(string.format('BENCH {"requests":%d,"duration_us":%d,' ..
	    '"connect_errors":%d,"read_errors":%d,"write_errors":%d,' ..
	    '"timeouts":%d,"status_errors":%d,"p50_us":%d,"p90_us":%d,' ..
	    '"p99_us":%d,"max_us":%d,"processed":%d,"replayed":%d,' ..
	    '"other200":%d,"non200":%d,"exhausted":%d}\n',
	    summary.requests, summary.duration, e.connect, e.read, e.write,
	    e.timeout, e.status, latency:percentile(50),
	    latency:percentile(90), latency:percentile(99), latency.max,
	    c.processed, c.replayed, c.other200, c.non200, c.exhausted))
end
