// CRC-32C (Castagnoli), as TFRecord framing needs it, and TensorFlow's masking of stored CRCs
// (a CRC of data that contains CRCs is weak, so stored ones are rotated and offset).
#ifndef DISTTRAIN_TRAINER_SUMMARY_CRC32C_H_
#define DISTTRAIN_TRAINER_SUMMARY_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace disttrain::trainer {

uint32_t Crc32c(const void* data, size_t size);

inline uint32_t MaskCrc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_SUMMARY_CRC32C_H_
