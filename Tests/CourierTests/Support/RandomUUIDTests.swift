import Foundation
import Testing
@testable import Courier

@Suite("Random UUIDs")
struct RandomUUIDTests {
    @Test("version 4 and RFC variant bits, and no repeats in 10,000")
    func versionAndVariant() {
        var seen = Set<UUID>()
        for _ in 0..<10_000 {
            let id = UUID.random()
            let text = id.uuidString
            let characters = Array(text)
            #expect(characters[14] == "4", "version nibble of \(text)")
            #expect("89AB".contains(characters[19]), "variant of \(text)")
            seen.insert(id)
        }
        #expect(seen.count == 10_000)
    }
}
