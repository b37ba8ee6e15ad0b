// Built against an installed kiln: succeeds only if (ones(2,2) * 3).sum() == 12.
#include <kiln/kiln.h>

#include <cstdio>

int main() {
  const float got = (kiln::ones({2, 2}) * 3).sum().item<float>();
  std::printf("consumer: (ones({2,2}) * 3).sum() = %g\n", got);
  return got == 12.0f ? 0 : 1;
}
