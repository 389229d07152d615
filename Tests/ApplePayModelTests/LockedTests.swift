import OrchardBase
import Testing

@testable import ApplePayModel

@Suite("Locked: the package's lock box")
struct LockedTests {
    @Test("concurrent changes under the lock are none of them lost")
    func concurrentIncrements() async {
        let counter = Locked(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { for _ in 0..<1_000 { counter.withLock { $0 += 1 } } }
            }
        }
        #expect(counter.current == 8_000)
    }

    @Test("a throwing body leaves the lock free and its change made; a Void box is a plain lock")
    func throwingBody() {
        struct Refused: Error {}
        let box = Locked([1])
        #expect(throws: Refused.self) {
            try box.withLock { (values: inout [Int]) throws(Refused) in
                values.append(2)
                throw Refused()
            }
        }
        #expect(box.withLock { $0 } == [1, 2])
        let plain = Locked()
        #expect(plain.withLock { 42 } == 42)
    }
}
