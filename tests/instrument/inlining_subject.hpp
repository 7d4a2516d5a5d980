// inlining_subject.cpp: a function with an always-inlined helper.
#pragma once

namespace ns3 {
int outer(int x);
}  // namespace ns3
