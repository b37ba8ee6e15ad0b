// Device: where a tensor's memory lives (cpu, or cuda:N).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace kiln {

enum class DeviceType : uint8_t { CPU, CUDA };
constexpr DeviceType kCPU = DeviceType::CPU;
constexpr DeviceType kCUDA = DeviceType::CUDA;

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;

  Device() = default;
  Device(DeviceType t, int i = 0) : type(t), index(i) {}  // NOLINT: implicit as torch::Device
  // "cpu", "cuda", "cuda:1"
  explicit Device(const std::string& spec);
  Device(const char* spec) : Device(std::string(spec)) {}  // NOLINT

  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_cuda() const { return type == DeviceType::CUDA; }
  std::string str() const;  // "cpu", "cuda:0"
  friend bool operator==(const Device& a, const Device& b) {
    return a.type == b.type && (a.type == DeviceType::CPU || a.index == b.index);
  }
  friend bool operator!=(const Device& a, const Device& b) { return !(a == b); }
};

std::ostream& operator<<(std::ostream& os, const Device& d);

namespace cuda {
// Whether a CUDA backend is compiled in and a GPU answers. Graphs for a CUDA
// device can be built (and dumped) without one; evaluating them needs one.
bool is_available();
int device_count();
}  // namespace cuda

}  // namespace kiln
