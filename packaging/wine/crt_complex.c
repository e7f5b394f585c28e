/* Fiometer's Wine test bed only (never shipped): the C99 complex-math functions of Microsoft's UCRT
 * that Wine 8's ucrtbase leaves as "unimplemented" stubs, which numpy calls while importing.
 * Built by packaging/wine/setup.sh into a DLL that numpy's modules are pointed at; every other
 * function of api-ms-win-crt-math is forwarded to Wine's ucrtbase by the generated .def file.
 *
 * ABI: the UCRT passes complex numbers as structs of two floats/doubles (_Fcomplex, _Dcomplex), and
 * MSVC's long double is a double, so the *l forms are the double forms. A struct keeps GCC's calling
 * convention identical to MSVC's on Win64, whatever GCC does with its own _Complex type. */
#include <complex.h>

typedef struct { float v[2]; } fc;
typedef struct { double v[2]; } dc;

static inline double complex D(dc z) { return __builtin_complex(z.v[0], z.v[1]); }
static inline float complex F(fc z) { return __builtin_complex(z.v[0], z.v[1]); }
static inline dc dcof(double complex z) { dc r = {{creal(z), cimag(z)}}; return r; }
static inline fc fcof(float complex z) { fc r = {{crealf(z), cimagf(z)}}; return r; }

#define UNARY(name)                                                              \
    dc fm_##name(dc z) { return dcof(name(D(z))); }                               \
    dc fm_##name##l(dc z) { return dcof(name(D(z))); }                            \
    fc fm_##name##f(fc z) { return fcof(name##f(F(z))); }
#define REAL(name)                                                               \
    double fm_##name(dc z) { return name(D(z)); }                                 \
    double fm_##name##l(dc z) { return name(D(z)); }                              \
    float fm_##name##f(fc z) { return name##f(F(z)); }

UNARY(cexp) UNARY(clog) UNARY(csqrt) UNARY(csin) UNARY(ccos) UNARY(ctan) UNARY(csinh) UNARY(ccosh)
UNARY(ctanh) UNARY(casin) UNARY(cacos) UNARY(catan) UNARY(casinh) UNARY(cacosh) UNARY(catanh)
UNARY(conj) UNARY(cproj)
REAL(creal) REAL(cimag) REAL(cabs) REAL(carg)

dc fm_cpow(dc x, dc y) { return dcof(cpow(D(x), D(y))); }
dc fm_cpowl(dc x, dc y) { return dcof(cpow(D(x), D(y))); }
fc fm_cpowf(fc x, fc y) { return fcof(cpowf(F(x), F(y))); }
