import Testing

/// The graphical picker's suites, one test at a time: each test starts Xvfb, an accessibility
/// bus, the picker, the agent and its mock services, and two at once starve each other's
/// accessibility bus past its 25 s timeout under the thread sanitizer.
@Suite("The graphical picker under Xvfb, one test at a time", .serialized)
struct GraphicalPickerTests {}
