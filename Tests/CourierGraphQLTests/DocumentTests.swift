import Foundation
import Testing
@testable import CourierGraphQL

/// Reading operation types from documents, and hashing them.
@Suite struct DocumentTests {
    @Test func scannerFindsNamedOperationsAtTopLevelOnly() {
        let document = """
            # query Commented { x }
            fragment query on Hero { name }              # a fragment may be called "query"
            query GetHero($id: ID = "mutation Fake", $f: F = {a: {b: 1}}) {
              hero(id: $id) { ...query note(text: \"\"\"
                subscription Inner { \\\""" }
              \"\"\") }
            }
            mutation   RenameHero { renameHero { name } }
            subscription OnReview { review { stars } }
            { anonymous }
            query { alsoAnonymous }
            """
        #expect(
            GraphQLDocumentScanner.operations(in: document) == [
                "GetHero": .query, "RenameHero": .mutation, "OnReview": .subscription,
            ])
    }

    @Test func registryScansAndHashesOnce() throws {
        let registry = GraphQLDocumentRegistry(limit: 2)
        #expect(try registry.operationType(named: "A", in: "mutation A { a }") == .mutation)
        // FIPS 180-2 appendix B.1 test vector.
        #expect(registry.sha256Hash(of: "abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        _ = registry.sha256Hash(of: "abc")
        _ = registry.sha256Hash(of: "mutation A { a }")
        _ = registry.sha256Hash(of: "mutation A { a }")
        #expect(registry.hashComputations == 2)
    }
}
