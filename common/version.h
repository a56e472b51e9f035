// Version of the disttrain binaries, stamped by CMake from the project version.
#ifndef DISTTRAIN_COMMON_VERSION_H_
#define DISTTRAIN_COMMON_VERSION_H_

namespace disttrain {

// The release version ("0.1.0"); the same for the operator and the trainer.
const char* Version();

}  // namespace disttrain

#endif  // DISTTRAIN_COMMON_VERSION_H_
