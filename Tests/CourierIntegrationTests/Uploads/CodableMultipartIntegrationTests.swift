import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
import CourierTransfers

/// An `Encodable` model sent as `multipart/form-data` by ``MultipartFormEncoder``, on the transport
/// under test: the strict parser sees every part with its exact bytes, httpbin reads the bracket
/// names as form fields, and a file from disk is streamed with upload progress.
@Suite("Codable multipart against the strict parser and httpbin")
struct CodableMultipartIntegrationTests {
    struct Listing: Encodable {
        struct Seller: Encodable {
            var name: String
            var city: String
        }
        var title: String
        var seller: Seller
        var tags: [String]
        var photo: MultipartFile
        var manual: MultipartFile
    }

    static func listing(photo: Data, manual: URL) -> Listing {
        Listing(
            title: "Lamp", seller: .init(name: "Ann", city: "Oslo"), tags: ["brass", "vintage"],
            photo: MultipartFile(data: photo, filename: "lamp.jpg", contentType: "image/jpeg"),
            manual: MultipartFile(fileURL: manual, contentType: "application/pdf"))
    }

    @Test func theStrictParserSeesEveryPartWithItsBytesAndProgressEndsAtTheTotal() async throws {
        let (client, _) = try UploadFixtures.client()
        let photo = UploadFixtures.bytes(50_000, seed: 3)
        let manualBytes = UploadFixtures.bytes(300_000, seed: 4)
        let manual = try UploadFixtures.file(manualBytes, name: "manual.pdf")
        defer { try? FileManager.default.removeItem(at: manual.deletingLastPathComponent()) }
        let form = try MultipartFormEncoder().encode(Self.listing(photo: photo, manual: manual))
        let request = Request<ParsedForm>(
            method: .post, path: "/uploads/multipart", body: .multipart(form), policy: UploadFixtures.policy
        ) { response, _ in try JSONDecoder().decode(ParsedForm.self, from: response.data) }
        let upload = client.upload(request)
        let progress = collect(upload.progress)
        let parsed = try await upload.value
        let values = await progress.value

        #expect(
            parsed.parts.map(\.name) == ["title", "seller[name]", "seller[city]", "tags[]", "tags[]", "photo", "manual"])
        #expect(parsed.parts[0].sha256 == UploadFixtures.sha256(Data("Lamp".utf8)))
        #expect(parsed.parts[4].sha256 == UploadFixtures.sha256(Data("vintage".utf8)))
        #expect(parsed.parts[5].sha256 == UploadFixtures.sha256(photo))
        #expect(parsed.parts[5].contentType == "image/jpeg")
        #expect(parsed.parts[6].sha256 == UploadFixtures.sha256(manualBytes))
        #expect(parsed.parts[6].filenameHex == UploadFixtures.hex("manual.pdf"))
        #expect(parsed.bytes == Int(form.contentLength))
        #expect(values.last == TransferProgress(completedBytes: form.contentLength, totalBytes: form.contentLength))
    }

    struct HTTPBinPost: Decodable, Sendable {
        var form: [String: FormValue]
        var files: [String: String]
    }

    /// httpbin gives one string, or a list for a repeated name.
    enum FormValue: Decodable, Sendable, Equatable {
        case one(String)
        case many([String])
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) {
                self = .one(text)
            } else {
                self = .many(try container.decode([String].self))
            }
        }
    }

    @Test func httpbinReadsTheBracketNamesAndTheFiles() async throws {
        let client = APIClient(environment: try TestServers.httpbinEnvironment()) { TestTransport.configure(&$0) }
        let manual = try UploadFixtures.file(Data("manual text".utf8), name: "manual.txt")
        defer { try? FileManager.default.removeItem(at: manual.deletingLastPathComponent()) }
        let body = try RequestBody.multipart(encoding: Self.listing(photo: Data("jpeg bytes".utf8), manual: manual))
        let echoed = try await client.send(Request<HTTPBinPost>(method: .post, path: "/post", body: body))
        #expect(echoed.form["title"] == .one("Lamp"))
        #expect(echoed.form["seller[name]"] == .one("Ann"))
        #expect(echoed.form["seller[city]"] == .one("Oslo"))
        #expect(echoed.form["tags[]"] == .many(["brass", "vintage"]))
        #expect(echoed.files["photo"] == "jpeg bytes")
        #expect(echoed.files["manual"] == "manual text")
    }
}
