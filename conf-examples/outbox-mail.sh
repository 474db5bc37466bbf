#!/bin/sh
# SPDX-License-Identifier: MIT
# oncehook outbox command target: the customer's "payment received"
# e-mail for an order.paid row, through the system's sendmail
# (docs/operations.md).  Install it (e.g. /usr/local/lib/oncehook/outbox-mail.sh,
# mode 0755) and set, beside the other ONCEHOOK_* variables:
#   ONCEHOOK_OUTBOX_ORDER_PAID_COMMAND=/usr/local/lib/oncehook/outbox-mail.sh
#   OUTBOX_MAIL_FROM=shop@example.com        (the sender)
#   OUTBOX_MAIL_SENT=/var/lib/oncehook/mail-sent  (a directory the
#                                             deliverer's user may write)
#   SENDMAIL=/usr/sbin/sendmail              (the default; another
#                                             program that takes -t -oi)
# It needs jq (Debian package jq) and a sendmail (exim4, postfix, msmtp).
# The mail names no amount: the payload's is the provider's (Stripe's in
# cents, the generic format's in units), which the site knows, not this.
#
# oncehook deliver runs it with the row's payload on standard input and
# ONCEHOOK_OUTBOX_ID, _TOPIC, _ENDPOINT, _KEY in its environment; exit 0
# means sent.  A row is delivered at least once: after a crash at the
# wrong moment, the same id comes again.  The id is noted once the mail
# is handed to sendmail, and a noted id is not sent again; the Message-ID
# is made from it too.  (Noting it before sending would lose the mail if
# this script died in between; this order may, rarely, send it twice.)
set -eu

sendmail=${SENDMAIL:-/usr/sbin/sendmail}
from=${OUTBOX_MAIL_FROM:?set OUTBOX_MAIL_FROM, the sender}
sent=${OUTBOX_MAIL_SENT:?set OUTBOX_MAIL_SENT, a directory for sent ids}
id=${ONCEHOOK_OUTBOX_ID:?run by oncehook deliver}

case $id in
''|*[!A-Za-z0-9_]*) echo "unexpected id: $id" >&2; exit 2 ;;
esac
if [ -e "$sent/$id" ]; then
	echo "$id: sent before"
	exit 0
fi
# Where the id is noted must be writable before anything is sent: a mail
# sent whose id cannot be noted would be sent again on every retry.
mkdir -p "$sent" && [ -w "$sent" ] && [ -d "$sent" ] || {
	echo "$id: cannot note sent ids in $sent" >&2
	exit 2
}
payload=$(cat)
to=$(printf '%s' "$payload" | jq -r '.customer_email // empty')
order=$(printf '%s' "$payload" | jq -r '.order_id // empty')
if [ -z "$to" ]; then
	# Nothing to send is done, not failed: no retry would change it.
	echo "$id: order $order has no customer_email: no mail"
	: >"$sent/$id"
	exit 0
fi
# A value from the payload goes into a header: no line breaks, no
# spaces in the address.
nl='
'
cr=$(printf '\r')
case $to$order in
*"$nl"*|*"$cr"*) echo "$id: a line break in the address or order id" >&2
	exit 2 ;;
esac
# One plain address: letters, digits and . _ % + - around one @, not
# starting with - (sendmail would read an option).
case $to in
-*|*@*@*|@*|*@|*[!A-Za-z0-9._%+@-]*) echo "$id: not one plain address" >&2
	exit 2 ;;
*@*) ;;
*) echo "$id: not one plain address" >&2; exit 2 ;;
esac
{
	printf 'From: %s\n' "$from"
	printf 'To: %s\n' "$to"
	printf 'Subject: Order %s: payment received\n' "$order"
	printf 'Message-ID: <%s@oncehook.invalid>\n' "$id"
	printf 'Content-Type: text/plain; charset=utf-8\n\n'
	printf 'Thank you: we received your payment for order %s.\n' "$order"
} | "$sendmail" -t -oi
: >"$sent/$id"
echo "$id: mailed order $order"
