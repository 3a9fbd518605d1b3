package model

// ConditionPoliciesReady is set by placement beside api-rules §8: True once every compute
// policy that applies to the VM is resolved and its tags are attached in vCenter; False,
// naming the problem, while a policy, the TagPolicy it names or its match cannot be
// resolved (nothing is attached or detached meanwhile, and status.policies keeps its last
// value).
const ConditionPoliciesReady = "VirtualMachinePoliciesReady"
