#pragma once
// The device probe: runs one small kernel on device 0 and checks what it wrote.
#include <cstddef>

namespace fusebox::cuda {

// Fills `device` with device 0's name. Returns true when a kernel launched, ran and wrote what it
// should; otherwise false with the CUDA error in `why`.
bool probe_device(char* device, size_t device_size, char* why, size_t why_size);

}  // namespace fusebox::cuda
