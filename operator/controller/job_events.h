// Which job a watch event concerns, and how urgently: the informers' handlers that feed the
// job work queue.
#ifndef DISTTRAIN_OPERATOR_CONTROLLER_JOB_EVENTS_H_
#define DISTTRAIN_OPERATOR_CONTROLLER_JOB_EVENTS_H_

#include <string>

#include "operator/runtime/informer.h"
#include "operator/runtime/work_queue.h"

namespace disttrain::controller {

// "namespace/job" of a pod or service the operator made (its job-name label); "" otherwise.
std::string OwnerKey(const runtime::ObjectPtr& obj);

// Jobs enqueue themselves.
runtime::EventHandler EnqueueJobs(runtime::WorkQueue* queue);

// Services enqueue their job.
runtime::EventHandler EnqueueServiceOwners(runtime::WorkQueue* queue);

// Pods enqueue their job; a pod that has just exited (a chief that finished, a replica that
// failed) puts its job at the head of the queue, since acting on it releases pods and their GPUs
// and must not wait behind a backlog of jobs being created.
runtime::EventHandler EnqueuePodOwners(runtime::WorkQueue* queue);

}  // namespace disttrain::controller

#endif  // DISTTRAIN_OPERATOR_CONTROLLER_JOB_EVENTS_H_
