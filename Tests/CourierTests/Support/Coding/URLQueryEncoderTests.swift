import Foundation
import Testing
import Courier

extension CodingTests {
    @Suite struct URLQueryEncoderTests {
        static func query(_ value: some Encodable, _ encoder: URLQueryEncoder = URLQueryEncoder()) throws -> String {
            PercentEncoding.query(from: try encoder.encode(value))
        }

        @Test(arguments: [
            (["email": "user+tag@example.com"], "email=user%2Btag%40example.com"),
            (["q": "a&b=c#d"], "q=a%26b%3Dc%23d"),
            (["sp": "x y"], "sp=x%20y"),
            (["path": "/a/b?c"], "path=%2Fa%2Fb%3Fc"),
            (["unicode": "café ☕"], "unicode=caf%C3%A9%20%E2%98%95"),
            (["safe": "AZaz09-._~"], "safe=AZaz09-._~"),
            (["a b": "1"], "a%20b=1"),
            (["empty": ""], "empty="),
        ])
        func escapesValues(input: [String: String], expected: String) throws {
            #expect(try Self.query(input) == expected)
        }

        struct Search: Encodable {
            let query: String
            let ids: [Int]
            let page: Int?
            let includeArchived: Bool
        }

        static let search = Search(query: "swift", ids: [1, 2], page: nil, includeArchived: true)

        @Test(arguments: [
            (URLQueryEncoder.ArrayEncoding.brackets, "ids%5B%5D=1&ids%5B%5D=2&includeArchived=true&query=swift"),
            (.repeated, "ids=1&ids=2&includeArchived=true&query=swift"),
            (.commaSeparated, "ids=1%2C2&includeArchived=true&query=swift"),
        ])
        func arrayStyles(style: URLQueryEncoder.ArrayEncoding, expected: String) throws {
            #expect(try Self.query(Self.search, URLQueryEncoder(arrayEncoding: style)) == expected)
        }

        @Test func arrayStylesProduceExpectedItems() throws {
            let brackets = try URLQueryEncoder(arrayEncoding: .brackets).encode(["ids": [1, 2]])
            #expect(brackets == [URLQueryItem(name: "ids[]", value: "1"), URLQueryItem(name: "ids[]", value: "2")])
            let repeated = try URLQueryEncoder(arrayEncoding: .repeated).encode(["ids": [1, 2]])
            #expect(repeated == [URLQueryItem(name: "ids", value: "1"), URLQueryItem(name: "ids", value: "2")])
            let comma = try URLQueryEncoder(arrayEncoding: .commaSeparated).encode(["ids": [1, 2]])
            #expect(comma == [URLQueryItem(name: "ids", value: "1,2")])
        }

        @Test func nilAndEmptyValuesAreOmitted() throws {
            struct Sparse: Encodable {
                let a: String?
                let b: [Int]
                let c: Int?
                let d: [String: String]
            }
            #expect(try URLQueryEncoder().encode(Sparse(a: nil, b: [], c: 3, d: [:])) == [URLQueryItem(name: "c", value: "3")])
            #expect(try Self.query(["xs": [1, nil, 2]]) == "xs=1&xs=2")
        }

        @Test func keysAreSorted() throws {
            struct Unsorted: Encodable {
                let zeta = 1
                let alpha = 2
                let mid = 3
            }
            #expect(try Self.query(Unsorted()) == "alpha=2&mid=3&zeta=1")
        }

        @Test(arguments: [
            (URLQueryEncoder.BoolEncoding.literal, "off=false&on=true"),
            (.numeric, "off=0&on=1"),
        ])
        func boolStrategies(style: URLQueryEncoder.BoolEncoding, expected: String) throws {
            #expect(try Self.query(["on": true, "off": false], URLQueryEncoder(boolEncoding: style)) == expected)
        }

        static let date = Date(timeIntervalSince1970: 1_779_749_187.580497)

        @Test(arguments: [
            (URLQueryEncoder.DateEncoding.iso8601, "2026-05-25T22:46:27Z"),
            (.iso8601WithFractionalSeconds, "2026-05-25T22:46:27.580Z"),
            (.secondsSince1970, "1779749187.580497"),
            (.millisecondsSince1970, "1779749187580"),
            (.formatted("yyyy-MM-dd HH:mm"), "2026-05-25 22:46"),
            (.custom { "day-\(Int($0.timeIntervalSince1970) / 86_400)" }, "day-20598"),
        ])
        func dateStrategies(style: URLQueryEncoder.DateEncoding, expected: String) throws {
            let items = try URLQueryEncoder(dateEncoding: style).encode(["at": Self.date])
            #expect(items == [URLQueryItem(name: "at", value: expected)])
        }

        @Test func wholeSecondsEncodeAsInteger() throws {
            let items = try URLQueryEncoder(dateEncoding: .secondsSince1970)
                .encode(["at": Date(timeIntervalSince1970: 1_779_749_187)])
            #expect(items == [URLQueryItem(name: "at", value: "1779749187")])
        }

        @Test func nestedObjectsUseBrackets() throws {
            struct Filter: Encodable {
                let status: String
                let range: Range
            }
            struct Range: Encodable {
                let from: Int
                let to: Int
            }
            struct Request: Encodable {
                let filter: Filter
                let limit: Int
            }
            let request = Request(filter: Filter(status: "open", range: Range(from: 1, to: 9)), limit: 20)
            let items = try URLQueryEncoder().encode(request)
            #expect(items.map(\.name) == ["filter[range][from]", "filter[range][to]", "filter[status]", "limit"])
            #expect(items.map(\.value) == ["1", "9", "open", "20"])
        }

        @Test func scalarTypesRender() throws {
            struct Scalars: Encodable {
                let double = 1.5
                let float: Float = 0.1
                let int8: Int8 = -8
                let uint64 = UInt64.max
                let url = URL(string: "https://example.com/a?b=c")
                let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
                let decimal = Decimal(string: "12.50")
                let data = Data([0xFF, 0x00, 0x10])
            }
            let items = try URLQueryEncoder().encode(Scalars())
            let values = Dictionary(uniqueKeysWithValues: items.map { ($0.name, $0.value ?? "") })
            #expect(
                values == [
                    "double": "1.5", "float": "0.1", "int8": "-8", "uint64": "18446744073709551615",
                    "url": "https://example.com/a?b=c", "uuid": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F",
                    "decimal": "12.5", "data": "/wAQ",
                ])
        }

        @Test func rawRepresentableEnumsEncodeTheirRawValue() throws {
            enum Sort: String, Encodable { case newest }
            #expect(try Self.query(["sort": Sort.newest]) == "sort=newest")
        }

        @Test func sameInputGivesIdenticalOutput() throws {
            let input: [String: [String: String]] = ["f": ["z": "1", "a": "2", "m": "3"], "b": ["k": "v w"]]
            let first = try Self.query(input)
            let second = try Self.query(input)
            #expect(first == second)
            #expect(first == "b%5Bk%5D=v%20w&f%5Ba%5D=2&f%5Bm%5D=3&f%5Bz%5D=1")
        }

        struct TopLevel: Encodable {
            let value: any Encodable & Sendable
            func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
        }

        @Test(arguments: [
            TopLevel(value: 42),
            TopLevel(value: "text"),
            TopLevel(value: [1, 2]),
            TopLevel(value: Optional<Int>.none),
            TopLevel(value: ["matrix": [[1], [2]]]),
            TopLevel(value: ["objects": [["a": 1]]]),
            TopLevel(value: ["nan": Double.nan]),
            TopLevel(value: ["far": Date(timeIntervalSince1970: 1e12)]),
        ])
        func unsupportedShapesThrowInvalidValue(_ input: TopLevel) throws {
            let error = try #require(throws: EncodingError.self) {
                try URLQueryEncoder().encode(input)
            }
            guard case .invalidValue = error else {
                Issue.record("Expected invalidValue, got \(error)")
                return
            }
        }

        @Test func conflictingContainersThrow() {
            struct Confused: Encodable {
                func encode(to encoder: any Encoder) throws {
                    var single = encoder.singleValueContainer()
                    try single.encode(1)
                    var keyed = encoder.container(keyedBy: CodingKeysStub.self)
                    try keyed.encode(2, forKey: .a)
                }
            }
            #expect(throws: EncodingError.self) {
                try URLQueryEncoder().encode(["x": Confused()])
            }
        }

        enum CodingKeysStub: String, CodingKey { case a }

        @Test func emptyStructGivesNoItems() throws {
            struct Nothing: Encodable {}
            #expect(try URLQueryEncoder().encode(Nothing()).isEmpty)
        }

        @Test func userInfoReachesValues() throws {
            let key = try #require(CodingUserInfoKey(rawValue: "test.prefix"))
            struct Prefixed: Encodable {
                let key: CodingUserInfoKey
                func encode(to encoder: any Encoder) throws {
                    var container = encoder.container(keyedBy: CodingKeysStub.self)
                    try container.encode((encoder.userInfo[key] as? String ?? "") + "x", forKey: .a)
                }
            }
            let items = try URLQueryEncoder(userInfo: [key: "pre-"]).encode(Prefixed(key: key))
            #expect(items == [URLQueryItem(name: "a", value: "pre-x")])
        }
    }
}
