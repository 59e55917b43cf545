// The placeholders that the documentation's samples use without declaring them: an app's model
// types, endpoints, values from an earlier sample of the same page, and UI calls. Each file in
// Generated/ is one sample (scripts/samples writes them); a sample's own declaration of a name
// shadows the one here. Nothing in this target runs: it only has to compile.
import Courier
import CourierEnvironments
import CourierGraphQL
import CourierOffline
import CourierRealtime
import CourierSignIn
import CourierTesting
import CourierTransfers
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// MARK: - The app's model

struct Item: Codable, Sendable, Hashable {
    var id: Int
    var name: String
}

struct NewItem: Encodable, Sendable {
    var name: String
}

struct Photo: Decodable, Sendable {
    var id: String
}

struct Order: Codable, Sendable {
    var id: Int
}

struct Price: Decodable, Sendable {
    var amount: Decimal
}

struct Tag: Decodable, Sendable {
    var name: String
}

struct Page: Decodable, Sendable {
    var items: [Item]
}

struct Note: Sendable {
    var id: Int
    var etag: String
}

struct NoteEdit: Encodable, Sendable {
    var id: String
    var text: String
}

struct ItemFilter: Encodable, Sendable {
    enum Status: String, Encodable, Sendable { case active, archived }
    var status: Status
    var ids: [Int]
}

struct Credentials: Encodable, Sendable {
    var user: String
    var password: String
}

// MARK: - The app's endpoints

struct GetItem: Endpoint {
    typealias Response = Item
    let id: Int
    var path: String { "/items/\(id)" }
    var pathTemplate: String? { "/items/{id}" }
}

/// A download endpoint declares the response it would decode; `client.download` ignores it.
struct GetVideo: Endpoint {
    typealias Response = Data
    let id: Int
    var path: String { "/videos/\(id)" }
}

/// An NDJSON export, streamed with `client.stream`.
struct ExportOrders: Endpoint {
    typealias Response = Data
    var path: String { "/orders/export" }
}

struct Login: Endpoint {
    typealias Response = OAuthTokenResponse
    var password: String
    var path: String { "/auth/login" }
    var method: HTTPMethod { .post }
    var body: RequestBody { .json(Credentials(user: "ann", password: password)) }
    var policy: EndpointPolicy { .authRefresh }
}

struct ListItems: GraphQLOperation {
    static let document = "query ListItems { items { id name } }"
    static let operationName = "ListItems"
    struct ResponseData: Decodable, Sendable { var items: [Item] }
    var variables: EmptyVariables { EmptyVariables() }
}

struct EmptyVariables: Encodable, Sendable {}

/// ThePipeline article's first sample.
struct UserAgentInterceptor: Interceptor {
    func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
        try await next(request)
    }
}

/// The CourierRealtime article's outbox (compiled in full from that article).
actor Outbox {
    init(live: WebSocketClient) {}
    func send(_ message: WebSocketMessage) async {}
    func flush() async {}
}

/// The app's realtime protocol: sequence numbers in messages, and the replay request.
enum Feed {
    static func seq(of message: WebSocketMessage) -> Int? { nil }
    static func replay(_ missing: ClosedRange<Int>) -> String { "{}" }
}

final class LiveFeed: Sendable {
    func apply(_ message: WebSocketMessage) {}
    func refetch() async {}
}

/// The app's services, where the BackgroundUploads article keeps its transport.
final class AppServices: Sendable {
    static let shared = AppServices()
    let uploadTransport = URLSessionBackgroundTransport(identifier: "com.example.app.uploads")
}

struct Catalog: Codable, Sendable {
    var items: [Item]
}

struct CatalogAPI: Sendable {
    func catalog() async throws -> Catalog { Catalog(items: []) }
}

// MARK: - Values from an earlier sample of the same page

extension APIEnvironment {
    static let production = APIEnvironment(name: "production", baseURL: URL(string: "https://api.example.com/v1")!)
}

let env = APIEnvironment.production
let stagingKey = "staging-api-key"
let productionPins = SampleEnvironments.pins
let isDebug = true
let support = appSupport
let disk = MemoryCacheStorage()
let development = SampleEnvironments.development
let staging = SampleEnvironments.staging
let production = SampleEnvironments.production
/// Made by an earlier sample with `EnvironmentSet.detect` (asynchronous); never read here.
nonisolated(unsafe) var environments: EnvironmentSet! = nil

/// Environments declared by an earlier sample (the initializers throw; this never runs).
enum SampleEnvironments {
    static let development = make { try APIEnvironment("development", baseURL: URL(string: "http://localhost:8080")!) }
    static let staging = make { try APIEnvironment("staging", baseURL: URL(string: "https://staging.example.com/v1")!) }
    static let production = make { try APIEnvironment("production", baseURL: URL(string: "https://api.example.com/v1")!) }
    static let pins = make { try PinningPolicy(pins: ["api.example.com": [currentKeyPin, backupKeyPin]]) }

    private static func make<T>(_ build: () throws -> T) -> T {
        do { return try build() } catch { preconditionFailure("sample scaffolding: \(error)") }
    }
}
let environment = APIEnvironment.production
let client = APIClient(environment: .production)
let tokens = TokenManager(
    store: FileTokenStore(directory: appSupport, namespace: "production"),
    grant: .oauth2(tokenURL: URL(string: "https://auth.example.com/oauth/token")!))
let tokenManager = tokens
let cache = HTTPCache()
let har = HARRecorder()
let logger = ConsoleNetworkLogger()
let graphQL = GraphQLClient(client: client)
let live = WebSocketClient(configuration: WebSocketClient.Configuration(url: URL(string: "wss://api.example.com/live")!))
let connectivity = OutcomeConnectivityMonitor()
let snapshots = SnapshotStore(directory: appSupport)
let stub = StubTransport { _ in .json("{}") }
let testClock = TestClock()
let feed = LiveFeed()
let api = CatalogAPI()

let appSupport = URL(fileURLWithPath: "/tmp/app-support", isDirectory: true)
let supportDirectory = appSupport
let cachesURL = URL(fileURLWithPath: "/tmp/caches", isDirectory: true)
let cachesDirectory = cachesURL
let folder = appSupport
let photoURL = URL(fileURLWithPath: "/tmp/photo.jpg")
let videoURL = URL(fileURLWithPath: "/tmp/video.mov")
let pickedURL = photoURL
let pickedVideo = videoURL
nonisolated(unsafe) var saved: DownloadResumeData?
nonisolated(unsafe) var savedResumeData: DownloadResumeData?

let note = Note(id: 7, etag: "\"v3\"")
let edit = NoteEdit(id: "edit-1", text: "Buy milk")
let credentials = Credentials(user: "ann", password: "secret")
let email = "ann@example.com"
let password = "secret"
let access = "access-token"
let refresh = "refresh-token"
let accessToken = access
let searchText = "lamp"
let currentKeyPin = "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
let backupKeyPin = "sha256/BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB="
let current = currentKeyPin
let backup = backupKeyPin
let data = Data()
let request = URLRequest(url: URL(string: "https://api.example.com/login")!)
let bytes = MessageBody(Data())
let body = bytes

// MARK: - The app's UI and services

final class ProgressBar: @unchecked Sendable {
    var fraction = 0.0
    func update(_ fraction: Double?) {}
    func show(_ completed: Int64, of total: Int64?) {}
}

final class Banner: @unchecked Sendable {
    var isVisible = false
    func show(_ state: some Sendable) {}
}

struct Session: Sendable {
    var userID: String?
    func token() async -> String { "token" }
}
struct Account: Sendable { var id: String }
struct Router: Sendable { func showSignIn() {} }
struct TermsFlow: Sendable { func userAccepted() async -> Bool { true } }
struct Analytics: Sendable {
    func track(_ event: NetworkMetricsEvent) {}
    func track(_ name: String, _ properties: [String: String]) {}
}

actor OrderStore {
    func insert(_ order: Order) throws {}
    func upsert(_ order: Order) {}
}

final class Settings: @unchecked Sendable { var ordersLastEventID: String? }

let bar = ProgressBar()
let banner = Banner()
nonisolated(unsafe) var badge = 0
let session = Session(userID: "u1")
let account = Account(id: "u1")
let userID = "u1"
let router = Router()
let termsFlow = TermsFlow()
let analytics = Analytics()
let store = OrderStore()
let database = store
let settings = Settings()

func show(_ value: some Any) {}
func offerRetry(after delay: Duration) {}
func showSignIn() {}
func requestScope(_ scope: String?) {}
func showUntrustedServerAlert(_ message: String) {}
func retryText(_ retryAfter: RetryAfter?) -> String { "Try again later." }
func render<Value>(_ value: Value, stale: Bool) {}
func handle(_ value: some Any) {}
func log(_ message: String) {}
func mergedNote(local: Mutation, server: Data) throws -> Mutation? { local }
