import Foundation
import Testing

@testable import AccessoryCore

@Suite("Locked")
struct LockedTests {
    @Test("threads that change the value at once lose none of their changes")
    func concurrentChangesAllCount() async {
        let counter = Locked((count: 0, last: [Int]()))
        let threads = 4
        let changes = 20_000
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<threads {
                group.addTask {
                    for change in 0..<changes {
                        counter.withLock { state in
                            state.count += 1
                            state.last.append(thread * changes + change)
                            if state.last.count > 8 { state.last.removeFirst() }
                        }
                    }
                }
            }
        }
        #expect(counter.withLock { $0.count } == threads * changes)
        #expect(counter.withLock { $0.last.count } == 8)
    }

    @Test("an error thrown under the lock reaches the caller, and the lock is free again")
    func throwingBodyReleasesTheLock() {
        struct Refused: Error {}
        let value = Locked(1)
        #expect(throws: Refused.self) {
            try value.withLock { (number: inout Int) throws(Refused) in
                number = 2
                throw Refused()
            }
        }
        #expect(value.withLock { $0 } == 2)
    }
}
