import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
@testable import CourierTransfers

/// An `Encodable` model as `multipart/form-data`: names from `CodingKeys` in Rails/PHP bracket form,
/// files as file parts.
@Suite struct MultipartFormEncoderTests {
    struct Address: Encodable {
        var city: String
        var zip: Int
    }

    struct User: Encodable {
        var name: String
        var address: Address
    }

    struct Item: Encodable {
        var sku: String
        var quantity: Int
    }

    struct Profile: Encodable {
        var user: User
        var tags: [String]
        var items: [Item]
        var admin: Bool
        var score: Double
        var nickname: String?
        var joined: Date
        var avatar: MultipartFile

        enum CodingKeys: String, CodingKey {
            case user, tags, items, admin, score, nickname
            case joined = "joined_at"
            case avatar
        }
    }

    static func part(_ name: String, _ value: String) -> String {
        "--XyZ0\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n"
    }

    @Test func aModelEncodesToExactlyTheseBytesInCodingKeysOrder() throws {
        let profile = Profile(
            user: User(name: "Ann", address: Address(city: "Oslo", zip: 150)), tags: ["a", "b"],
            items: [Item(sku: "X1", quantity: 2)], admin: true, score: 1.5, nickname: nil,
            joined: Date(timeIntervalSince1970: 1_767_225_600),
            avatar: MultipartFile(data: Data("PNG".utf8), filename: "me.png", contentType: "image/png"))
        let form = try MultipartFormEncoder().encode(profile, into: MultipartForm(boundary: "XyZ0"))
        let expected =
            Self.part("user[name]", "Ann") + Self.part("user[address][city]", "Oslo") + Self.part("user[address][zip]", "150")
            + Self.part("tags[]", "a") + Self.part("tags[]", "b") + Self.part("items[][sku]", "X1")
            + Self.part("items[][quantity]", "2") + Self.part("admin", "true") + Self.part("score", "1.5")
            + Self.part("joined_at", "2026-01-01T00:00:00Z")
            + "--XyZ0\r\nContent-Disposition: form-data; name=\"avatar\"; filename=\"me.png\"\r\nContent-Type: image/png\r\n\r\nPNG"
            + "\r\n--XyZ0--\r\n"
        #expect(String(decoding: try form.encodedData(), as: UTF8.self) == expected)
        #expect(form.contentLength == Int64(expected.utf8.count))
    }

    @Test func aFileFromDiskIsAddedByItsSizeAndReadOnlyWhenSent() throws {
        struct Upload: Encodable {
            var title: String
            var document: MultipartFile
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("report.csv")
        try Data("a,b\n1,2\n".utf8).write(to: file)
        let form = try MultipartFormEncoder().encode(
            Upload(title: "Q1", document: MultipartFile(fileURL: file, contentType: "text/csv")),
            into: MultipartForm(boundary: "XyZ0"))
        #expect(form.hasFiles)
        let text = String(decoding: try form.encodedData(), as: UTF8.self)
        #expect(
            text.contains("name=\"document\"; filename=\"report.csv\"\r\nContent-Type: text/csv\r\n\r\na,b\n1,2\n\r\n--XyZ0--"))
    }

    @Test func aFileThatCannotBeReadIsATypedError() throws {
        struct Upload: Encodable { var document: MultipartFile }
        let missing = URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString).bin")
        #expect(throws: MultipartFormError.unreadableFile(path: missing.path)) {
            try MultipartFormEncoder().encode(Upload(document: MultipartFile(fileURL: missing)))
        }
    }

    @Test func aTopLevelValueThatIsNotKeyedIsRefused() throws {
        #expect(throws: EncodingError.self) { try MultipartFormEncoder().encode(["a", "b"]) }
        #expect(throws: EncodingError.self) { try MultipartFormEncoder().encode("text") }
    }

    @Test func aFileEncodedAsJSONFailsInsteadOfSendingNothing() {
        struct Upload: Encodable { var document: MultipartFile }
        #expect(throws: EncodingError.self) {
            try JSONEncoder().encode(Upload(document: MultipartFile(data: Data(), filename: "x")))
        }
    }

    @Test func aPropertyWithItsOwnDateFormatKeepsIt() throws {
        struct Stamp: Encodable {
            @CodedDate<DateCoding.MillisecondsSince1970> var at: Date
        }
        let form = try MultipartFormEncoder().encode(
            Stamp(at: Date(timeIntervalSince1970: 2)), into: MultipartForm(boundary: "XyZ0"))
        #expect(String(decoding: try form.encodedData(), as: UTF8.self) == Self.part("at", "2000") + "--XyZ0--\r\n")
    }

    @Test func nonFiniteNumbersAreRefused() {
        struct Reading: Encodable { var value: Double }
        #expect(throws: EncodingError.self) { try MultipartFormEncoder().encode(Reading(value: .nan)) }
    }
}
