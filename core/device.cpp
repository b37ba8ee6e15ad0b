// Device parsing and printing; CUDA availability (no backend yet: false).
#include "kiln/device.h"

#include "kiln/error.h"

namespace kiln {

Device::Device(const std::string& spec) {
  if (spec == "cpu") {
    type = DeviceType::CPU;
    index = 0;
    return;
  }
  if (spec.rfind("cuda", 0) == 0) {
    type = DeviceType::CUDA;
    index = 0;
    if (spec.size() > 4) {
      KILN_CHECK(spec[4] == ':' && spec.size() > 5 &&
                     spec.find_first_not_of("0123456789", 5) == std::string::npos,
                 "Device", "invalid device string: '", spec, "'");
      KILN_CHECK(spec.size() <= 5 + 9, "Device", "invalid device string: '", spec,
                 "' (device index out of range)");
      index = std::stoi(spec.substr(5));
    }
    return;
  }
  KILN_FAIL("Device", "invalid device string: '", spec,
            "' (expected cpu, cuda or cuda:N)");
}

std::string Device::str() const {
  return type == DeviceType::CPU ? std::string("cpu") : "cuda:" + std::to_string(index);
}

std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

namespace cuda {
bool is_available() { return false; }
int device_count() { return 0; }
}  // namespace cuda

}  // namespace kiln
