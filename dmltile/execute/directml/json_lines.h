/* The JSON-lines reader and writer helpers shared by dmltile's runners (runner.c and ort_runner.c).
 *
 * A small JSON reader: values point into the line buffer (strings are unescaped in place),
 * containers are malloc'ed, tracked, and freed per line with free_tracked(). Numbers are kept as
 * unsigned 64-bit magnitudes with a sign flag: the protocols carry sizes, counts and enums only.
 * Strings with \u escapes read as '?': the drivers send bytes as hex instead.
 */
#ifndef DMLTILE_JSON_LINES_H
#define DMLTILE_JSON_LINES_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } JType;
typedef struct JValue {
    JType type;
    int boolean;
    int negative, integral;
    unsigned long long number;
    char *str;
    size_t len;
    size_t count;
    struct JValue *items;
    char **keys;
} JValue;

static void **g_allocs;
static size_t g_nallocs, g_capallocs;

static void *track(void *p) {
    if (!p) { fputs("{\"kind\": \"fatal\", \"error\": \"out of memory\"}\n", stdout); exit(6); }
    if (g_nallocs == g_capallocs) {
        g_capallocs = g_capallocs ? 2 * g_capallocs : 64;
        g_allocs = realloc(g_allocs, g_capallocs * sizeof *g_allocs);
        if (!g_allocs) exit(6);
    }
    g_allocs[g_nallocs++] = p;
    return p;
}
static void free_tracked(void) {
    for (size_t i = 0; i < g_nallocs; i++) free(g_allocs[i]);
    g_nallocs = 0;
}

static void skip_ws(char **p) { while (**p == ' ' || **p == '\t' || **p == '\r' || **p == '\n') (*p)++; }

static int parse_value(char **p, JValue *v, int depth);

static int parse_string(char **p, char **out, size_t *len) {
    char *s = ++*p, *w = s;
    while (**p && **p != '"') {
        char c = *(*p)++;
        if (c == '\\') {
            char e = *(*p)++;
            switch (e) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'u':
                for (int i = 0; i < 4; i++) if (!**p) return 0; else (*p)++;
                c = '?';
                break;
            case 0: return 0;
            default: c = e; break;
            }
        }
        *w++ = c;
    }
    if (**p != '"') return 0;
    (*p)++;
    *w = 0;
    *out = s;
    *len = (size_t)(w - s);
    return 1;
}

static int parse_container(char **p, JValue *v, int depth, int is_obj) {
    size_t cap = 4, n = 0;
    JValue *items = malloc(cap * sizeof *items);
    char **keys = is_obj ? malloc(cap * sizeof *keys) : NULL;
    if (!items || (is_obj && !keys)) return 0;
    track(items);
    if (is_obj) track(keys);
    (*p)++;
    skip_ws(p);
    char close = is_obj ? '}' : ']';
    if (**p == close) { (*p)++; goto done; }
    for (;;) {
        if (n == cap) {
            cap *= 2;
            JValue *ni = realloc(items, cap * sizeof *items);
            if (!ni) return 0;
            for (size_t i = 0; i < g_nallocs; i++) if (g_allocs[i] == items) g_allocs[i] = ni;
            items = ni;
            if (is_obj) {
                char **nk = realloc(keys, cap * sizeof *keys);
                if (!nk) return 0;
                for (size_t i = 0; i < g_nallocs; i++) if (g_allocs[i] == keys) g_allocs[i] = nk;
                keys = nk;
            }
        }
        skip_ws(p);
        if (is_obj) {
            size_t klen;
            if (**p != '"' || !parse_string(p, &keys[n], &klen)) return 0;
            skip_ws(p);
            if (**p != ':') return 0;
            (*p)++;
        }
        if (!parse_value(p, &items[n], depth + 1)) return 0;
        n++;
        skip_ws(p);
        if (**p == ',') { (*p)++; continue; }
        if (**p == close) { (*p)++; break; }
        return 0;
    }
done:
    v->type = is_obj ? J_OBJ : J_ARR;
    v->items = items;
    v->keys = keys;
    v->count = n;
    return 1;
}

static int parse_value(char **p, JValue *v, int depth) {
    memset(v, 0, sizeof *v);
    if (depth > 32) return 0;
    skip_ws(p);
    char c = **p;
    if (c == '{') return parse_container(p, v, depth, 1);
    if (c == '[') return parse_container(p, v, depth, 0);
    if (c == '"') { v->type = J_STR; return parse_string(p, &v->str, &v->len); }
    if (!strncmp(*p, "null", 4)) { v->type = J_NULL; *p += 4; return 1; }
    if (!strncmp(*p, "true", 4)) { v->type = J_BOOL; v->boolean = 1; *p += 4; return 1; }
    if (!strncmp(*p, "false", 5)) { v->type = J_BOOL; *p += 5; return 1; }
    if (c == '-' || (c >= '0' && c <= '9')) {
        v->type = J_NUM;
        v->integral = 1;
        if (c == '-') { v->negative = 1; (*p)++; }
        if (**p < '0' || **p > '9') return 0;
        while (**p >= '0' && **p <= '9') {
            unsigned d = (unsigned)(*(*p)++ - '0');
            if (v->number > (~0ull - d) / 10) v->integral = 0;  /* overflow: not representable */
            v->number = v->number * 10 + d;
        }
        if (**p == '.' || **p == 'e' || **p == 'E') {
            v->integral = 0;
            (*p)++;
            while ((**p >= '0' && **p <= '9') || **p == '+' || **p == '-' || **p == 'e' || **p == 'E') (*p)++;
        }
        return 1;
    }
    return 0;
}

static inline const JValue *jget(const JValue *o, const char *key) {
    if (!o || o->type != J_OBJ) return NULL;
    for (size_t i = 0; i < o->count; i++) if (!strcmp(o->keys[i], key)) return &o->items[i];
    return NULL;
}
static inline unsigned long long jnum(const JValue *o, const char *key, unsigned long long dflt) {
    const JValue *v = jget(o, key);
    return (v && v->type == J_NUM) ? v->number : dflt;
}
static inline int jbool(const JValue *o, const char *key) {
    const JValue *v = jget(o, key);
    return v && v->type == J_BOOL && v->boolean;
}

/* ------------------------------------------------------------------------------------------------ */
/* output helpers */

static void put_json_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') { putchar('\\'); putchar(c); }
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}
static void put_hex(const unsigned char *b, size_t n) {
    static const char digits[] = "0123456789abcdef";
    char chunk[8192];
    size_t k = 0;
    putchar('"');
    for (size_t i = 0; i < n; i++) {
        chunk[k++] = digits[b[i] >> 4];
        chunk[k++] = digits[b[i] & 15];
        if (k == sizeof chunk) { fwrite(chunk, 1, k, stdout); k = 0; }
    }
    fwrite(chunk, 1, k, stdout);
    putchar('"');
}
static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}
/* decodes hex in place; returns the byte count or -1 */
static long long unhex(char *s, size_t len) {
    if (len % 2) return -1;
    for (size_t i = 0; i < len / 2; i++) {
        int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
        if (hi < 0 || lo < 0) return -1;
        s[i] = (char)(hi * 16 + lo);
    }
    return (long long)(len / 2);
}

#endif
