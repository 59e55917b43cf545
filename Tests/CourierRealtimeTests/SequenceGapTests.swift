import Testing
@testable import CourierRealtime

/// Gap detection over the numbers a server sends: any `Int` at all, in any order.
@Suite struct SequenceGapTests {
    @Test func aSkipAheadIsAGapAndOlderNumbersAreNot() {
        var detector = SequenceGapDetector()
        #expect(detector.record(40) == nil)
        #expect(detector.record(44) == 41...43)
        #expect(detector.record(42) == nil)  // a replayed message
        #expect(detector.last == 44)
    }

    @Test(arguments: [[Int.max, 1], [Int.max, Int.max], [Int.min, Int.max, 0], [Int.max - 1, Int.max]])
    func extremeNumbersNeverTrap(_ numbers: [Int]) {
        var detector = SequenceGapDetector()
        for number in numbers { _ = detector.record(number) }
        #expect(detector.last == numbers.max())
    }

    @Test func aGapUpToTheLargestNumberIsReported() {
        var detector = SequenceGapDetector()
        _ = detector.record(Int.max - 3)
        #expect(detector.record(Int.max) == (Int.max - 2)...(Int.max - 1))
    }
}
