import DBusValues
import Testing

@Suite("DBusValue: what the agent's contract is written in, with no GLib beneath")
struct DBusValueTests {
    @Test func integersOfEveryWidthReadAsIntAndAnUnrepresentableOneDoesNot() {
        let values: [DBusValue] = [.byte(7), .int16(-7), .uint16(7), .int32(-7), .uint32(7), .int64(-7), .uint64(7)]
        #expect(values.map(\.int) == [7, -7, 7, -7, 7, -7, 7])
        #expect(DBusValue.uint64(.max).int == nil)
        #expect(DBusValue.string("7").int == nil)
        #expect(DBusValue.double(7).int == nil)
    }

    @Test func stringsAndObjectPathsReadAsStringsAndNothingElseDoes() {
        #expect(DBusValue.string("wlan0").string == "wlan0")
        #expect(DBusValue.objectPath("/io/accessorysetup").string == "/io/accessorysetup")
        #expect(DBusValue.bytes(Array("wlan0".utf8)).string == nil)
        #expect(DBusValue.boolean(true).bool == true)
        #expect(DBusValue.byte(1).bool == nil)
    }

    /// An empty `ay` may arrive as an empty array of another form; both read as no bytes, and
    /// bytes read element by element as bytes.
    @Test func bytesAndTheirElements() {
        #expect(DBusValue.bytes([1, 2]).bytes == [1, 2])
        #expect(DBusValue.array([], elementType: "y").bytes == [])
        #expect(DBusValue.array([.byte(1)], elementType: "y").bytes == nil)
        #expect(DBusValue.bytes([1, 2]).elements == [.byte(1), .byte(2)])
        #expect(DBusValue.tuple([.string("a"), .uint32(1)]).elements == [.string("a"), .uint32(1)])
        #expect(DBusValue.string("a").elements == [])
    }

    @Test func aVardictWrapsEachValueInAVariantInItsOrder() {
        let dictionary = DBusValue.vardict([("b", .uint32(2)), ("a", .string("x"))])
        guard case .dictionary(let entries, let entryType) = dictionary else {
            Issue.record("not a dictionary: \(dictionary)")
            return
        }
        #expect(entryType == "{sv}")
        #expect(entries.map(\.key) == [.string("b"), .string("a")])
        #expect(entries.map(\.value) == [.variant(.init(.uint32(2))), .variant(.init(.string("x")))])
        #expect(dictionary["a"] == .variant(.init(.string("x"))))
        #expect(dictionary["c"] == nil)
        #expect(DBusValue.string("a")["a"] == nil, "only a dictionary has keys")
    }

    @Test func aDictionaryAsReadIsLookedUpByItsStringKeys() {
        let read = DBusValue.dictionary(
            [.init(key: .string("state"), value: .string("joined")), .init(key: .uint32(1), value: .boolean(true))],
            entryType: "{sv}")
        #expect(read["state"]?.string == "joined")
        #expect(read["1"] == nil, "a key that is not a string is never matched by its text")
        #expect(DBusValue.strings(["a", "b"]) == .array([.string("a"), .string("b")], elementType: "s"))
    }
}
