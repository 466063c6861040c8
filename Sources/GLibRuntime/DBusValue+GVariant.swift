import CGLib
import CGLibShim
import DBusValues

extension DBusValue {
    /// Copies a `GVariant`, unwrapping variants; the caller keeps its reference.
    public init(copying variant: OpaquePointer) {
        self = Self.value(variant)
    }

    private static func value(_ variant: OpaquePointer) -> DBusValue {
        let type = String(cString: g_variant_get_type_string(variant))
        switch type {
        case "b": return .boolean(g_variant_get_boolean(variant) != 0)
        case "y": return .byte(g_variant_get_byte(variant))
        case "n": return .int16(g_variant_get_int16(variant))
        case "q": return .uint16(g_variant_get_uint16(variant))
        case "i": return .int32(g_variant_get_int32(variant))
        case "u": return .uint32(g_variant_get_uint32(variant))
        case "x": return .int64(Int64(g_variant_get_int64(variant)))
        case "t": return .uint64(UInt64(g_variant_get_uint64(variant)))
        case "d": return .double(g_variant_get_double(variant))
        case "s", "g": return .string(String(cString: g_variant_get_string(variant, nil)))
        case "o": return .objectPath(String(cString: g_variant_get_string(variant, nil)))
        case "h": return .handle(g_variant_get_handle(variant))
        case "v":
            let inner = g_variant_get_variant(variant)!
            defer { g_variant_unref(inner) }
            return value(inner)
        case "ay":
            var size: gsize = 0
            guard let data = cglib_variant_get_bytes(variant, &size) else { return .bytes([]) }
            return .bytes(Array(UnsafeBufferPointer(start: data, count: Int(size))))
        default:
            let children = (0..<g_variant_n_children(variant)).map { index -> DBusValue in
                let child = g_variant_get_child_value(variant, index)!
                defer { g_variant_unref(child) }
                return value(child)
            }
            if type.hasPrefix("a{") {
                let entries = children.compactMap { entry -> DBusValue.Entry? in
                    guard case .tuple(let pair) = entry, pair.count == 2 else { return nil }
                    return DBusValue.Entry(key: pair[0], value: pair[1])
                }
                return .dictionary(entries, entryType: String(type.dropFirst()))
            }
            if type.hasPrefix("a") { return .array(children, elementType: String(type.dropFirst())) }
            // Tuples and dict entries.
            return .tuple(children)
        }
    }

    /// A new floating `GVariant` holding this value.
    public func newVariant() -> OpaquePointer {
        Self.variant(self)
    }

    /// A value where the type says `v`: reading unwraps variants, so a value read and sent on
    /// again is wrapped back here.
    private static func boxed(_ value: DBusValue) -> OpaquePointer {
        if case .variant = value { return variant(value) }
        return g_variant_new_variant(variant(value))
    }

    private static func variant(_ value: DBusValue) -> OpaquePointer {
        switch value {
        case .boolean(let v): return g_variant_new_boolean(v ? 1 : 0)
        case .byte(let v): return g_variant_new_byte(v)
        case .int16(let v): return g_variant_new_int16(v)
        case .uint16(let v): return g_variant_new_uint16(v)
        case .int32(let v): return g_variant_new_int32(v)
        case .uint32(let v): return g_variant_new_uint32(v)
        case .int64(let v): return g_variant_new_int64(gint64(v))
        case .uint64(let v): return g_variant_new_uint64(guint64(v))
        case .double(let v): return g_variant_new_double(v)
        case .string(let v): return g_variant_new_string(v)
        case .objectPath(let v): return g_variant_new_object_path(v)
        case .handle(let v): return g_variant_new_handle(v)
        case .bytes(let v):
            return v.withUnsafeBufferPointer { cglib_variant_new_bytes($0.baseAddress, gsize($0.count)) }
        case .variant(let box): return g_variant_new_variant(variant(box.value))
        case .tuple(let values):
            let children: [OpaquePointer?] = values.map(variant)
            return children.withUnsafeBufferPointer { g_variant_new_tuple($0.baseAddress, gsize($0.count)) }
        case .array(let values, let elementType):
            let children: [OpaquePointer?] = values.map { elementType == "v" ? boxed($0) : variant($0) }
            return children.withUnsafeBufferPointer {
                cglib_variant_new_array(elementType, $0.baseAddress, gsize($0.count))
            }
        case .dictionary(let entries, let entryType):
            let variantValues = entryType.hasSuffix("v}")
            let children: [OpaquePointer?] = entries.map {
                g_variant_new_dict_entry(variant($0.key), variantValues ? boxed($0.value) : variant($0.value))
            }
            return children.withUnsafeBufferPointer {
                cglib_variant_new_array(entryType, $0.baseAddress, gsize($0.count))
            }
        }
    }
}
