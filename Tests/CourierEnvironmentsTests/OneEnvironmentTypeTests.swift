import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
@testable import CourierEnvironments
import CourierTesting

@Suite("One environment type: single-API clients and environment sets share APIEnvironment and one switch")
struct OneEnvironmentTypeTests {
    typealias F = EnvironmentFixture

    @Test("the single-API form and the set form describe the same environment")
    func singleAndMultipleAPIs() throws {
        let url = try #require(URL(string: "https://api.example.test/v1"))
        let simple = APIEnvironment(name: "production", baseURL: url)
        let declared = try APIEnvironment("production", baseURL: url)
        #expect(simple == declared)
        #expect(simple.baseURL == url && simple.baseURLs == [APIEnvironment.defaultAPI: url])
        #expect(simple.storageNamespace == "production" && simple.displayName == "production")

        let media = try #require(URL(string: "https://media.example.test"))
        let both = try APIEnvironment("staging", baseURLs: ["default": url, "media": media], storageNamespace: "stg")
        let mediaClient = try both.api("media")
        #expect(mediaClient.baseURL == media)
        #expect(mediaClient.id == "staging" && mediaClient.storageNamespace == "stg")
        #expect(throws: EnvironmentError.missingBaseURL(environment: "staging", api: "search")) { try both.api("search") }
    }

    @Test("an environment set checks identifiers the single-API form does not")
    func setChecksIdentifiers() throws {
        let loose = APIEnvironment(name: "my staging", baseURL: try #require(URL(string: "https://s.example.test")))
        #expect(throws: EnvironmentError.invalidIdentifier("my staging")) {
            try EnvironmentSet(
                environments: [loose], build: F.reading(.debug), store: InMemoryEnvironmentChoiceStore(), override: nil)
        }
    }

    @Test("switchEnvironment(to:) on a client of a set switches the set: every client follows")
    func clientSwitchMovesTheSet() async throws {
        let set = try F.set()
        let first = try APIClient(environments: set)
        let second = try APIClient(environments: set)
        let production = try #require(set.environment("production"))
        try await first.switchEnvironment(to: production)
        #expect(set.current.id == "production")
        #expect(second.environment.id == "production")
        await #expect(throws: EnvironmentError.self) {
            try await first.switchEnvironment(to: F.environment("nowhere"))
        }
    }

    @Test("switchEnvironment(to:) on a plain client takes the environment as it is")
    func plainClientSwitch() async throws {
        let client = APIClient(environment: try F.environment("development"))
        let other = try F.environment("staging", host: "qa")
        try await client.switchEnvironment(to: other)
        #expect(client.environment == other)
    }
}
