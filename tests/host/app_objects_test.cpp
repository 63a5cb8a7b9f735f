// heapbench/app_objects.hpp against the host compiler's own answers: destroy()
// finds the start of an object through a pointer to any of its bases as
// dynamic_cast<void*> does (the same Itanium ABI as nvcc's device code; the GPU
// test tests/apps/objects.cu runs it there).
#include "heapbench/app_objects.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace {

struct A {
  virtual ~A() = default;
  long a = 1;
};
struct B {
  virtual ~B() = default;
  double b[3] = {};
};
struct C : A, B {
  int c = 3;
};
struct D : C {
  std::string name = "d";
};
struct V1 : virtual A {
  int v1 = 0;
};
struct V2 : virtual A {
  int v2 = 0;
};
struct Diamond : V1, V2 {
  int d = 0;
};
struct Plain {
  int x = 0;
};

TEST(AppObjects, MostDerivedIsWhatDynamicCastToVoidGives) {
  D d;
  A* as_a = &d;
  B* as_b = &d;
  C* as_c = &d;
  EXPECT_EQ(heapbench::app::most_derived(as_a), dynamic_cast<void*>(as_a));
  EXPECT_EQ(heapbench::app::most_derived(as_b), dynamic_cast<void*>(as_b));
  EXPECT_EQ(heapbench::app::most_derived(as_c), dynamic_cast<void*>(as_c));
  EXPECT_NE(static_cast<void*>(as_b), static_cast<void*>(&d)) << "B must not sit at D's start, or the test shows nothing";
  EXPECT_EQ(heapbench::app::most_derived(as_b), static_cast<void*>(&d));
}

TEST(AppObjects, MostDerivedFindsTheObjectThroughAVirtualBase) {
  Diamond x;
  A* as_a = &x;
  V2* as_v2 = &x;
  EXPECT_EQ(heapbench::app::most_derived(as_a), static_cast<void*>(&x));
  EXPECT_EQ(heapbench::app::most_derived(as_v2), static_cast<void*>(&x));
}

TEST(AppObjects, APlainClassIsItsOwnStart) {
  Plain p;
  const Plain* cp = &p;
  EXPECT_EQ(heapbench::app::most_derived(cp), static_cast<void*>(&p));
}

TEST(AppObjects, AnArrayKeepsItsCountOnlyWhenItHasDestructorsToRun) {
  EXPECT_EQ(heapbench::app::array_cookie_bytes<int>(), 0u);
  EXPECT_EQ(heapbench::app::array_cookie_bytes<Plain>(), 0u);
  EXPECT_EQ(heapbench::app::array_cookie_bytes<std::string>(), 16u);
  EXPECT_EQ(heapbench::app::array_cookie_bytes<D>() % 16, 0u);
}

}  // namespace
