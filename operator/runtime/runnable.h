// Something the manager starts once the operator leads and stops before its controllers: a
// background loop that feeds controllers (controller-runtime's manager.Runnable).
#ifndef DISTTRAIN_OPERATOR_RUNTIME_RUNNABLE_H_
#define DISTTRAIN_OPERATOR_RUNTIME_RUNNABLE_H_

namespace disttrain::runtime {

class Runnable {
 public:
  virtual ~Runnable() = default;
  virtual void Start() = 0;
  // Returns once it has stopped.
  virtual void Stop() = 0;
};

}  // namespace disttrain::runtime

#endif  // DISTTRAIN_OPERATOR_RUNTIME_RUNNABLE_H_
