/* Fiometer's Wine test bed only (never shipped): Qt6Core links Windows 10's system ICU (icuuc.dll)
 * for QStringConverter's legacy encodings; Wine 8 has no icuuc.dll, so Qt could not even load.
 * This stand-in offers no converters at all: ucnv_open fails with U_FILE_ACCESS_ERROR and the list of
 * available converters is empty, which Qt handles as "encoding not available" (UTF-8/16/32 and Latin-1
 * are Qt's own and unaffected). What it cannot show, legacy code pages through ICU, needs real Windows. */
#include <stddef.h>
#include <stdint.h>

typedef int UErrorCode;
typedef uint16_t UChar;
#define U_FILE_ACCESS_ERROR 4
#define U_UNSUPPORTED_ERROR 16

static int failed(UErrorCode *status) { return status && *status > 0; }
static void fail(UErrorCode *status, UErrorCode code) { if (status && !failed(status)) *status = code; }

void *ucnv_open(const char *name, UErrorCode *status) { (void)name; fail(status, U_FILE_ACCESS_ERROR); return NULL; }
void ucnv_close(void *cnv) { (void)cnv; }
void ucnv_reset(void *cnv) { (void)cnv; }
int32_t ucnv_countAvailable(void) { return 0; }
const char *ucnv_getAvailableName(int32_t n) { (void)n; return NULL; }
const char *ucnv_getName(const void *cnv, UErrorCode *status) { (void)cnv; fail(status, U_UNSUPPORTED_ERROR); return NULL; }
const char *ucnv_getStandardName(const char *name, const char *standard, UErrorCode *status) {
    (void)name; (void)standard; (void)status; return NULL;
}
int8_t ucnv_getMaxCharSize(const void *cnv) { (void)cnv; return 1; }
int32_t ucnv_fromUCountPending(const void *cnv, UErrorCode *status) { (void)cnv; fail(status, U_UNSUPPORTED_ERROR); return 0; }
int32_t ucnv_toUCountPending(const void *cnv, UErrorCode *status) { (void)cnv; fail(status, U_UNSUPPORTED_ERROR); return 0; }
void ucnv_fromUnicode(void *cnv, char **t, const char *tl, const UChar **s, const UChar *sl, int32_t *o, int8_t f,
                      UErrorCode *status) {
    (void)cnv; (void)t; (void)tl; (void)s; (void)sl; (void)o; (void)f; fail(status, U_UNSUPPORTED_ERROR);
}
void ucnv_toUnicode(void *cnv, UChar **t, const UChar *tl, const char **s, const char *sl, int32_t *o, int8_t f,
                    UErrorCode *status) {
    (void)cnv; (void)t; (void)tl; (void)s; (void)sl; (void)o; (void)f; fail(status, U_UNSUPPORTED_ERROR);
}
void ucnv_getFromUCallBack(const void *cnv, void **action, const void **context) {
    (void)cnv; if (action) *action = NULL; if (context) *context = NULL;
}
void ucnv_getToUCallBack(const void *cnv, void **action, const void **context) {
    (void)cnv; if (action) *action = NULL; if (context) *context = NULL;
}
void ucnv_setFromUCallBack(void *cnv, void *a, const void *c, void **oa, const void **oc, UErrorCode *status) {
    (void)cnv; (void)a; (void)c; if (oa) *oa = NULL; if (oc) *oc = NULL; fail(status, U_UNSUPPORTED_ERROR);
}
void ucnv_setToUCallBack(void *cnv, void *a, const void *c, void **oa, const void **oc, UErrorCode *status) {
    (void)cnv; (void)a; (void)c; if (oa) *oa = NULL; if (oc) *oc = NULL; fail(status, U_UNSUPPORTED_ERROR);
}
void UCNV_FROM_U_CALLBACK_SUBSTITUTE(void) {}
void UCNV_TO_U_CALLBACK_SUBSTITUTE(void) {}
void ucnv_cbFromUWriteUChars(void *args, const UChar **s, const UChar *sl, int32_t o, UErrorCode *status) {
    (void)args; (void)s; (void)sl; (void)o; fail(status, U_UNSUPPORTED_ERROR);
}
void ucnv_cbToUWriteUChars(void *args, const UChar *s, int32_t n, int32_t o, UErrorCode *status) {
    (void)args; (void)s; (void)n; (void)o; fail(status, U_UNSUPPORTED_ERROR);
}
