#!/bin/sh
# SPDX-License-Identifier: MIT
# Build the libFuzzer targets with clang (ASan + UBSan) and run them for
# SECONDS (default 60) between them: fuzz_request two thirds, from a
# seed corpus of the providers' vectors; fuzz_jsondoc (jsondoc against
# jansson) a third.  Not part of make check: a tool for changes to
# pipeline/sig.c, pipeline/event.c, lib/jsondoc.c, front/resp.c.
# usage: tests/fuzz/run.sh [SECONDS]   (needs clang; run from anywhere)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-60}
work=${TMPDIR:-/tmp}/oncehook-fuzz
mkdir -p "$work/corpus"
# config.h: the one configure made, else a minimal one.
if [ -f "$top/_build/plain/config.h" ]; then
	cp "$top/_build/plain/config.h" "$work/config.h"
else
	printf '#define PACKAGE_VERSION "fuzz"\n#define CURL_SONAME "libcurl.so.4"\n' >"$work/config.h"
fi
clang -g -O1 -fsanitize=fuzzer,address,undefined -std=gnu11 \
    -I"$work" -I"$top/src" \
    "$top/tests/fuzz/fuzz_request.c" "$top/src/lib/log.c" "$top/src/lib/crypto.c" \
    "$top/src/lib/sha256.c" "$top/src/lib/form.c" "$top/src/lib/utf8.c" \
    "$top/src/lib/buf.c" \
    "$top/src/conf.c" "$top/src/lib/envindex.c" "$top/src/front/req.c" "$top/src/pipeline/sig.c" "$top/src/pipeline/event.c" "$top/src/lib/jsondoc.c" "$top/src/lib/jsonpeek.c" \
    "$top/src/front/resp.c" "$top/src/pipeline/sigpub.c" \
    "$top/src/pipeline/certs.c" "$top/src/lib/pubkey.c" \
    "$top/src/lib/dynlib.c" "$top/src/lib/curlapi.c" "$top/src/lib/utc.c" \
    $(pkg-config --cflags --libs jansson) -o "$work/fuzz_request"
printf 't=1614265330,v1=aa\0001614265330\000{"id":"evt_1","type":"x"}' \
    >"$work/corpus/stripe"
printf 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=\000msg_p5jXN8AQM9LWM0D4loKWxJek\000{"test": 2432232314}' \
    >"$work/corpus/standard"
printf 'sha256=00\000k\000{"type":"url_verification","challenge":"c"}' \
    >"$work/corpus/slack"
printf 'v0=00\0001614265330\000{"event":"endpoint.url_validation","payload":{"plainToken":"qgg8vlvZRS6UYooatFL8Aw"}}' \
    >"$work/corpus/zoom"
printf 'RSOYDt4T1cUTdK1PDd93/VVr8B8=\000bodySHA256=00\000CallSid=CA1&Caller=%%2B1+2&a=%%FF&a' \
    >"$work/corpus/twilio"
printf '\000\000{"live":"false","notificationItems":[{"NotificationRequestItem":{"additionalData":{"hmacSignature":"coqCmt/IZ4E3CzPvMY8zTjQVL5hYJUiBRg8UU+iCWo0="},"amount":{"currency":"EUR","value":1130},"eventCode":"AUTHORISATION","merchantAccountCode":"TestMerchant","merchantReference":"TestPayment-1407325143704","pspReference":"7914073381342284","success":"true"}}]}' \
    >"$work/corpus/adyen"
clang -g -O1 -fsanitize=fuzzer,address,undefined -std=gnu11 \
    -I"$work" -I"$top/src" -I"$top/tests/unit" \
    "$top/tests/fuzz/fuzz_jsondoc.c" "$top/src/lib/jsondoc.c" "$top/src/lib/utf8.c" \
    $(pkg-config --cflags --libs jansson) -o "$work/fuzz_jsondoc"
mkdir -p "$work/jcorpus"
printf '{"id":"evt_1","a":[1,2.5,1e2,-0.0,"\\u00e9\\n"],"b":{"":null}}' \
    >"$work/jcorpus/event"
printf '\001 1.5e300 ' >"$work/jcorpus/any"
"$work/fuzz_jsondoc" -max_total_time="$((secs / 3 + 1))" -max_len=4096 \
    -print_final_stats=1 "$work/jcorpus"
"$work/fuzz_request" -max_total_time="$((secs - secs / 3))" \
    -max_len=4096 -print_final_stats=1 "$work/corpus"
