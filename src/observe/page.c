/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the status page (SPEC section 10): one self-contained HTML
 * document, no external asset, no script, readable on a phone.  Each
 * endpoint's last 48 hours are drawn here, on the server, as inline
 * SVG: one stacked bar per hour (processed, duplicates, refused and
 * conflicts, failed).  Every text that came from outside (an
 * endpoint's name, a failure's reason) is escaped.
 */
#include "config.h"

#include <stdio.h>
#include <time.h>

#include "front/resp.h"
#include "observe/counters.h"
#include "observe/stats.h"

#define BAR_W	10			/* chart units per hour */
#define CHART_H	100

/* Colours of the chart's series, and of each health. */
static const struct {
	const char	*label;
	const char	*colour;
} series[] = {
	{ "processed", "#2e7d32" },
	{ "duplicates", "#1565c0" },
	{ "refused or conflicting", "#ef6c00" },
	{ "failed", "#c62828" },
};

static const char *const health_colour[HEALTH__MAX] = {
	[HEALTH_IDLE] = "#757575",
	[HEALTH_HEALTHY] = "#2e7d32",
	[HEALTH_DEGRADED] = "#ef6c00",
	[HEALTH_FAILING] = "#c62828",
};

/* Write s with &, <, >, " and ' escaped; bytes below 0x20 dropped. */
static void
esc(FILE *o, const char *s)
{
	for (; *s != '\0'; s++)
		switch (*s) {
		case '&':
			fputs("&amp;", o);
			break;
		case '<':
			fputs("&lt;", o);
			break;
		case '>':
			fputs("&gt;", o);
			break;
		case '"':
			fputs("&quot;", o);
			break;
		case '\'':
			fputs("&#39;", o);
			break;
		default:
			if ((unsigned char)*s >= 0x20)
				fputc(*s, o);
		}
}

/* Unix seconds as a UTC time a person reads, or "never". */
static const char *
when(int64_t t, char *buf, size_t sz)
{
	return stats_when(t, 0, buf, sz);
}

/* The four series of an hour: processed, duplicates, refused, failed. */
static void
hour_values(const struct stats_endpoint *e, int h, uint64_t v[4])
{
	v[0] = e->series[CAT_PROCESSED][h];
	v[1] = e->series[CAT_DUPLICATE][h];
	v[2] = e->series[CAT_REFUSED][h] + e->series[CAT_CONFLICT][h];
	v[3] = e->series[CAT_FAILED][h];
}

static void
chart(FILE *o, const struct stats_endpoint *e, int64_t now)
{
	uint64_t	 v[4], top = 0, t;
	double		 y, ht;
	int		 h, k;

	for (h = 0; h < CTR_HOURS; h++) {
		hour_values(e, h, v);
		if ((t = v[0] + v[1] + v[2] + v[3]) > top)
			top = t;
	}
	fprintf(o, "<svg class=\"chart\" viewBox=\"0 0 %d %d\" role=\"img\" "
	    "aria-label=\"deliveries per hour, the last 48 hours, at most "
	    "%llu in an hour\">\n", CTR_HOURS * BAR_W, CHART_H + 14,
	    (unsigned long long)top);
	fprintf(o, "<line x1=\"0\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
	    "stroke=\"#bbb\" stroke-width=\"0.5\"/>\n", CHART_H,
	    CTR_HOURS * BAR_W, CHART_H);
	for (h = 0; h < CTR_HOURS && top > 0; h++) {
		hour_values(e, h, v);
		if (v[0] + v[1] + v[2] + v[3] == 0)
			continue;
		fprintf(o, "<g><title>%d h ago: %llu processed, %llu "
		    "duplicates, %llu refused, %llu failed</title>",
		    CTR_HOURS - 1 - h, (unsigned long long)v[0],
		    (unsigned long long)v[1], (unsigned long long)v[2],
		    (unsigned long long)v[3]);
		y = CHART_H;
		for (k = 0; k < 4; k++) {
			if (v[k] == 0)
				continue;
			ht = (double)v[k] * (CHART_H - 4) / (double)top;
			if (ht < 1)
				ht = 1;
			y -= ht;
			fprintf(o, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" "
			    "height=\"%.1f\" fill=\"%s\"/>", h * BAR_W + 1, y,
			    BAR_W - 2, ht, series[k].colour);
		}
		fputs("</g>\n", o);
	}
	fprintf(o, "<text x=\"0\" y=\"%d\" font-size=\"9\" fill=\"#555\">48 h "
	    "ago</text><text x=\"%d\" y=\"%d\" font-size=\"9\" fill=\"#555\" "
	    "text-anchor=\"end\">now</text><text x=\"%d\" y=\"%d\" "
	    "font-size=\"9\" fill=\"#555\" text-anchor=\"middle\">peak %llu "
	    "an hour</text>\n</svg>\n", CHART_H + 12, CTR_HOURS * BAR_W,
	    CHART_H + 12, CTR_HOURS * BAR_W / 2, CHART_H + 12,
	    (unsigned long long)top);
	(void)now;
}

static void
number(FILE *o, const char *label, unsigned long long n)
{
	fprintf(o, "<div><b>%llu</b><span>%s</span></div>", n, label);
}

/* The outbox: its health and its rows by topic; nothing if no row. */
static void
outbox_card(FILE *o, const struct stats_outbox *b, int64_t now)
{
	size_t	 i;

	if (!b->counted || b->n == 0)
		return;
	fprintf(o, "<section class=\"card\">\n<h2>Outbox <span class=\""
	    "badge\" style=\"background:%s\">%s</span></h2>\n<p class=\""
	    "why\">", health_colour[b->health], stats_health_name(b->health));
	esc(o, b->why);
	fprintf(o, "</p>\n<div class=\"nums\">");
	number(o, "pending", (unsigned long long)b->pending);
	number(o, "delivered", (unsigned long long)b->delivered);
	number(o, "dead", (unsigned long long)b->dead);
	fprintf(o, "</div>\n<table><tr><th>topic</th><th>pending</th>"
	    "<th>delivered</th><th>dead</th><th>oldest pending</th></tr>\n");
	for (i = 0; i < b->n; i++) {
		fprintf(o, "<tr><td>");
		esc(o, b->t[i].topic);
		fprintf(o, "</td><td>%lld</td><td>%lld</td><td>%lld</td><td>",
		    b->t[i].pending, b->t[i].delivered, b->t[i].dead);
		if (b->t[i].oldest > 0)
			fprintf(o, "%lld min", (long long)(now -
			    b->t[i].oldest) / 60);
		else
			fprintf(o, "-");
		fprintf(o, "</td></tr>\n");
	}
	fprintf(o, "</table>\n</section>\n");
}

static void
card(FILE *o, const struct stats_endpoint *e, int64_t now)
{
	char		 t[40];
	uint64_t	 p = e->total[CAT_PROCESSED], d = e->total[CAT_DUPLICATE];
	int		 k;

	fprintf(o, "<section class=\"card\">\n<h2>");
	esc(o, e->name);
	if (e->scheme != NULL) {
		fprintf(o, " <small>");
		esc(o, e->scheme);
		fprintf(o, "</small> <span class=\"badge\" style=\"background:"
		    "%s\">%s</span>", health_colour[e->health],
		    stats_health_name(e->health));
	} else
		fprintf(o, " <small>requests that named no endpoint</small>");
	fprintf(o, "</h2>\n<p class=\"why\">");
	esc(o, e->why);
	fprintf(o, "</p>\n<div class=\"nums\">");
	number(o, "last hour", (unsigned long long)(e->hour[0] + e->hour[1] +
	    e->hour[2] + e->hour[3] + e->hour[4]));
	number(o, "last day", (unsigned long long)(e->day[0] + e->day[1] +
	    e->day[2] + e->day[3] + e->day[4]));
	number(o, "processed", (unsigned long long)p);
	number(o, "duplicates", (unsigned long long)d);
	number(o, "conflicts", (unsigned long long)e->total[CAT_CONFLICT]);
	number(o, "refused", (unsigned long long)e->total[CAT_REFUSED]);
	number(o, "failed", (unsigned long long)e->total[CAT_FAILED]);
	if (e->out[HOOK_HANDSHAKE] > 0)
		number(o, "handshakes",
		    (unsigned long long)e->out[HOOK_HANDSHAKE]);
	if (p + d > 0)
		fprintf(o, "<div><b>%.1f%%</b><span>dedup rate</span></div>",
		    100.0 * (double)d / (double)(p + d));
	fprintf(o, "</div>\n");
	chart(o, e, now);
	fprintf(o, "<p class=\"legend\">");
	for (k = 0; k < 4; k++)
		fprintf(o, "<i style=\"background:%s\"></i>%s ",
		    series[k].colour, series[k].label);
	fprintf(o, "</p>\n<p>Last success: %s<br>Last failure: ",
	    when(e->last_ok, t, sizeof(t)));
	fprintf(o, "%s", when(e->last_fail.at, t, sizeof(t)));
	if (e->last_fail.at > 0) {
		fprintf(o, " <code>%s</code> ",
		    resp_outcome((enum hook_err)e->last_fail.outcome));
		esc(o, e->last_fail.why);
	}
	fprintf(o, "</p>\n");
	if (e->rows.events >= 0)
		fprintf(o, "<p>Stored: %lld events (%lld failed, %lld dead), "
		    "%lld conflicts, %lld past retention.</p>\n", e->rows.events,
		    e->rows.failed, e->rows.dead, e->rows.conflicts,
		    e->rows.expired);
	fprintf(o, "</section>\n");
}

void
stats_write_html(FILE *o, const struct stats *s)
{
	char	 t[40];
	size_t	 i;

	fprintf(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta "
	    "charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width="
	    "device-width, initial-scale=1\">\n<meta http-equiv=\"refresh\" "
	    "content=\"60\">\n<title>oncehook status: %s</title>\n<style>\n"
	    "body{font:15px/1.4 system-ui,sans-serif;margin:0 auto;"
	    "max-width:980px;padding:12px;color:#222;background:#f6f6f6}\n"
	    "h1{font-size:1.3em;margin:.2em 0}h2{font-size:1.1em;margin:0}\n"
	    ".card{background:#fff;border:1px solid #ddd;border-radius:6px;"
	    "padding:12px;margin:12px 0}\n"
	    ".badge{color:#fff;border-radius:4px;padding:1px 8px;"
	    "font-size:.85em;vertical-align:middle}\n"
	    ".why{color:#555;margin:.3em 0}\n"
	    ".nums{display:flex;flex-wrap:wrap;gap:8px 18px;margin:8px 0}\n"
	    ".nums div{display:flex;flex-direction:column;min-width:70px}\n"
	    ".nums b{font-size:1.3em}.nums span{font-size:.8em;color:#666}\n"
	    ".chart{width:100%%;height:auto;display:block}\n"
	    ".legend{font-size:.8em;color:#555}.legend i{display:inline-block;"
	    "width:10px;height:10px;margin:0 4px 0 10px}\n"
	    "table{border-collapse:collapse;width:100%%;font-size:.9em}"
	    "td,th{text-align:left;border-bottom:1px solid #eee;padding:4px;"
	    "vertical-align:top;word-break:break-word}\n"
	    ".ok{color:#2e7d32}.warning{color:#ef6c00}.critical{color:#c62828}"
	    "\nsmall{color:#666;font-weight:normal}\n"
	    "</style></head><body>\n", s->code == 0 ? "ok" : s->code == 1 ?
	    "warning" : "critical");
	fprintf(o, "<h1>oncehook status</h1>\n<p class=\"%s\"><b>",
	    s->code == 0 ? "ok" : s->code == 1 ? "warning" : "critical");
	esc(o, s->verdict);
	fprintf(o, "</b></p>\n<p><small>%s", when(s->now, t, sizeof(t)));
	if (s->since > 0)
		fprintf(o, "; counting since %s", when(s->since, t, sizeof(t)));
	fprintf(o, "</small></p>\n");
	for (i = 0; i < s->nep; i++)
		card(o, &s->ep[i], s->now);
	if (s->unrouted.total[CAT_REFUSED] + s->unrouted.total[CAT_FAILED] > 0)
		card(o, &s->unrouted, s->now);
	outbox_card(o, &s->outbox, s->now);
	fprintf(o, "<section class=\"card\"><h2>Last failures</h2>\n");
	if (s->nrecent == 0)
		fprintf(o, "<p>None recorded.</p>\n");
	else {
		fprintf(o, "<table><tr><th>when</th><th>endpoint</th>"
		    "<th>outcome</th><th>reason</th></tr>\n");
		for (i = 0; i < s->nrecent; i++) {
			fprintf(o, "<tr><td>%s</td><td>",
			    when(s->recent[i].f.at, t, sizeof(t)));
			esc(o, s->recent[i].endpoint);
			fprintf(o, "</td><td><code>%s</code></td><td>",
			    resp_outcome((enum hook_err)
			    s->recent[i].f.outcome));
			esc(o, s->recent[i].f.why);
			fprintf(o, "</td></tr>\n");
		}
		fprintf(o, "</table>\n");
	}
	fprintf(o, "</section>\n<p><small>Database: %.1f MiB, write-ahead "
	    "log %.1f MiB.", s->db_bytes < 0 ? 0.0 : (double)s->db_bytes /
	    1048576, s->wal_bytes < 0 ? 0.0 : (double)s->wal_bytes / 1048576);
	if (s->store_err[0] != '\0') {
		fprintf(o, " Rows not counted: ");
		esc(o, s->store_err);
	}
	fprintf(o, "</small></p>\n</body></html>\n");
}
