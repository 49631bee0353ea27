// fields.h - structs whose fields are listed once: HOSTJIT_FIELDS declares
// the members and the visitor that walks them, so no field exists without
// being walked (fingerprints, printers, tests that change every field).
#pragma once

// Inside a struct, HOSTJIT_FIELDS((Type, name), (Type, name, initializer), ...)
// declares, in order, `Type name{initializer};` for each entry, and
//
//   template <class F> void forEachField(F &&f);        // f("name", Type &)
//   template <class F> void forEachField(F &&f) const;  // f("name", const Type &)
//
// calling f once per field in declared order. A type must not contain a
// comma outside parentheses (use an alias). At most 24 fields. A struct
// without fields uses HOSTJIT_NO_FIELDS. The struct stays an aggregate.
#define HOSTJIT_FIELDS(...)                                                    \
  HOSTJIT_FOR_EACH(HOSTJIT_FIELD_DECL, __VA_ARGS__)                            \
  template <class F>                                                           \
  void forEachField(F &&hostjit_visit_) {                                      \
    HOSTJIT_FOR_EACH(HOSTJIT_FIELD_VISIT, __VA_ARGS__)                         \
  }                                                                            \
  template <class F>                                                           \
  void forEachField(F &&hostjit_visit_) const {                                \
    HOSTJIT_FOR_EACH(HOSTJIT_FIELD_VISIT, __VA_ARGS__)                         \
  }

#define HOSTJIT_NO_FIELDS           \
  template <class F>                \
  void forEachField(F &&) const {}  \
  template <class F>                \
  void forEachField(F &&) {}

#define HOSTJIT_FIELD_DECL(entry) HOSTJIT_FIELD_DECL_ entry
#define HOSTJIT_FIELD_DECL_(type, name, ...) type name{__VA_ARGS__};
#define HOSTJIT_FIELD_VISIT(entry) HOSTJIT_FIELD_VISIT_ entry
#define HOSTJIT_FIELD_VISIT_(type, name, ...) hostjit_visit_(#name, name);

#define HOSTJIT_CAT_(a, b) a##b
#define HOSTJIT_CAT(a, b) HOSTJIT_CAT_(a, b)
#define HOSTJIT_NARGS(...) \
  HOSTJIT_NARGS_(__VA_ARGS__, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1)
#define HOSTJIT_NARGS_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, _18, _19, _20, \
                       _21, _22, _23, _24, n, ...)                                                               \
  n
#define HOSTJIT_FOR_EACH(m, ...) HOSTJIT_CAT(HOSTJIT_FE_, HOSTJIT_NARGS(__VA_ARGS__))(m, __VA_ARGS__)
#define HOSTJIT_FE_1(m, a) m(a)
#define HOSTJIT_FE_2(m, a, ...) m(a) HOSTJIT_FE_1(m, __VA_ARGS__)
#define HOSTJIT_FE_3(m, a, ...) m(a) HOSTJIT_FE_2(m, __VA_ARGS__)
#define HOSTJIT_FE_4(m, a, ...) m(a) HOSTJIT_FE_3(m, __VA_ARGS__)
#define HOSTJIT_FE_5(m, a, ...) m(a) HOSTJIT_FE_4(m, __VA_ARGS__)
#define HOSTJIT_FE_6(m, a, ...) m(a) HOSTJIT_FE_5(m, __VA_ARGS__)
#define HOSTJIT_FE_7(m, a, ...) m(a) HOSTJIT_FE_6(m, __VA_ARGS__)
#define HOSTJIT_FE_8(m, a, ...) m(a) HOSTJIT_FE_7(m, __VA_ARGS__)
#define HOSTJIT_FE_9(m, a, ...) m(a) HOSTJIT_FE_8(m, __VA_ARGS__)
#define HOSTJIT_FE_10(m, a, ...) m(a) HOSTJIT_FE_9(m, __VA_ARGS__)
#define HOSTJIT_FE_11(m, a, ...) m(a) HOSTJIT_FE_10(m, __VA_ARGS__)
#define HOSTJIT_FE_12(m, a, ...) m(a) HOSTJIT_FE_11(m, __VA_ARGS__)
#define HOSTJIT_FE_13(m, a, ...) m(a) HOSTJIT_FE_12(m, __VA_ARGS__)
#define HOSTJIT_FE_14(m, a, ...) m(a) HOSTJIT_FE_13(m, __VA_ARGS__)
#define HOSTJIT_FE_15(m, a, ...) m(a) HOSTJIT_FE_14(m, __VA_ARGS__)
#define HOSTJIT_FE_16(m, a, ...) m(a) HOSTJIT_FE_15(m, __VA_ARGS__)
#define HOSTJIT_FE_17(m, a, ...) m(a) HOSTJIT_FE_16(m, __VA_ARGS__)
#define HOSTJIT_FE_18(m, a, ...) m(a) HOSTJIT_FE_17(m, __VA_ARGS__)
#define HOSTJIT_FE_19(m, a, ...) m(a) HOSTJIT_FE_18(m, __VA_ARGS__)
#define HOSTJIT_FE_20(m, a, ...) m(a) HOSTJIT_FE_19(m, __VA_ARGS__)
#define HOSTJIT_FE_21(m, a, ...) m(a) HOSTJIT_FE_20(m, __VA_ARGS__)
#define HOSTJIT_FE_22(m, a, ...) m(a) HOSTJIT_FE_21(m, __VA_ARGS__)
#define HOSTJIT_FE_23(m, a, ...) m(a) HOSTJIT_FE_22(m, __VA_ARGS__)
#define HOSTJIT_FE_24(m, a, ...) m(a) HOSTJIT_FE_23(m, __VA_ARGS__)
