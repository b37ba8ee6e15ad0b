// Raising kiln::Error: "[op] message" for users, "internal error" for kiln bugs.
#include "kiln/error.h"

namespace kiln::detail {

void throw_user_error(const char* op, const std::string& msg) {
  throw Error(std::string("[") + op + "] " + msg);
}

void throw_internal_error(const char* file, int line, const char* cond, const std::string& msg) {
  std::string m = std::string("[internal] kiln invariant failed: ") + cond + " at " + file + ":" +
                  std::to_string(line);
  if (!msg.empty()) m += ": " + msg;
  m += " (this is a kiln bug; please report it)";
  throw Error(m);
}

}  // namespace kiln::detail
