//! Application state: what tools share (a database pool, a client, configuration), given to the
//! server once and taken by each tool as a parameter, and what one session keeps between calls.
//!
//! ```
//! use toolwright::{State, mcp_tool};
//!
//! /// Where the notes are.
//! struct Notebook {
//!     name: String,
//! }
//!
//! /// The notebook's name.
//! #[mcp_tool(read_only)]
//! fn notebook_name(notebook: State<Notebook>) -> String {
//!     notebook.name.clone()
//! }
//!
//! # fn serve() -> std::process::ExitCode {
//! toolwright::server!()
//!     .state(Notebook { name: "work".into() })
//!     .run()
//! # }
//! ```
//!
//! A parameter whose type is named `State` is the state of the type it holds: the server supplies
//! it and it is never part of the input schema, as with `Context`. `State<T>` is a shared
//! reference to the one `T` the server was given ([`Server::state`](crate::Server::state), or
//! built at start with [`Server::state_from`](crate::Server::state_from)); it derefs to `T`, and
//! cloning it is cheap. A server has any number of state types, one value of each. A tool whose
//! state type the server was not given stops the server at start, naming the tool and the type.
//!
//! The state is shared by every call at once: what a tool changes in it goes through `T`'s own
//! synchronisation (a `Mutex`, a pool, atomics). What one session keeps for itself goes in its
//! [`SessionState`] instead.
//!
//! "State" names three things in this crate, each by its own type: the application's state
//! ([`State<T>`], one value of each type for the whole server), a session's state
//! ([`SessionState`], what one client's calls keep between them), and the `requestState` of
//! protocol 2026-07-28, which a client carries from one round of a request to the next when a
//! tool asks it questions; the server seals that one with its key
//! ([`Server::request_state_secret`](crate::Server::request_state_secret)), and a tool never
//! sees it.

use std::any::{Any, TypeId, type_name};
use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, Mutex, MutexGuard};

/// The server's one value of `T`, taken by a tool as a parameter `name: State<T>` (or
/// `&State<T>`). See [the module](self).
pub struct State<T: ?Sized>(Arc<T>);

impl<T: Send + Sync + 'static> State<T> {
    /// A state of its own, for calling a tool function directly, in a test say.
    pub fn new(value: T) -> State<T> {
        State(Arc::new(value))
    }
}

impl<T: ?Sized> State<T> {
    /// The shared value, to keep beyond the call.
    pub fn into_arc(self) -> Arc<T> {
        self.0
    }
}

impl<T: ?Sized> From<Arc<T>> for State<T> {
    fn from(value: Arc<T>) -> State<T> {
        State(value)
    }
}

impl<T: ?Sized> Deref for State<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: ?Sized> Clone for State<T> {
    fn clone(&self) -> State<T> {
        State(Arc::clone(&self.0))
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for State<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("State").field(&self.0).finish()
    }
}

/// A state type a tool takes: what the server checks at start that it was given.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct StateType {
    /// `TypeId::of::<T>`.
    pub id: fn() -> TypeId,
    /// `type_name::<T>`, for messages.
    pub name: fn() -> &'static str,
}

/// Hands a tool the state a parameter whose type is named `State` asks for. Generated code goes
/// through this trait, so that another type named `State` fails here, once, at the user's type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not `toolwright::State`",
    label = "a parameter whose type is named `State` is application state",
    note = "take application state as `toolwright::State<T>`; to take your own type as an \
            argument, import it under another name: `use my_crate::State as MyState;`"
)]
#[doc(hidden)]
pub trait FromState: Sized {
    /// The state type, for the check at start.
    const TYPE: StateType;

    /// The state from the server's, or why the call cannot have it.
    fn from_states(states: &States) -> Result<Self, String>;
}

impl<T: Send + Sync + 'static> FromState for State<T> {
    const TYPE: StateType = StateType {
        id: TypeId::of::<T>,
        name: type_name::<T>,
    };

    fn from_states(states: &States) -> Result<State<T>, String> {
        states.get::<T>().map(State).ok_or_else(|| {
            format!(
                "the server was given no `{}`, the state this tool takes",
                type_name::<T>()
            )
        })
    }
}

/// The server's state: one value of each type it was given.
#[doc(hidden)]
#[derive(Clone, Default)]
pub struct States {
    values: HashMap<TypeId, Value>,
}

/// One state value, and its type's name.
#[derive(Clone)]
struct Value {
    value: Arc<dyn Any + Send + Sync>,
    name: &'static str,
}

impl States {
    /// Keeps `value` as the state of its type, instead of any before it.
    pub(crate) fn insert<T: Send + Sync + 'static>(&mut self, value: Arc<T>) {
        self.values.insert(
            TypeId::of::<T>(),
            Value {
                value,
                name: type_name::<T>(),
            },
        );
    }

    /// Keeps a value built at start, of the type `id` names.
    pub(crate) fn insert_any(
        &mut self,
        id: TypeId,
        name: &'static str,
        value: Arc<dyn Any + Send + Sync>,
    ) {
        self.values.insert(id, Value { value, name });
    }

    /// The state of type `T`, if the server was given one.
    pub(crate) fn get<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        let value = Arc::clone(&self.values.get(&TypeId::of::<T>())?.value);
        value.downcast::<T>().ok()
    }

    /// The state of type `T`, borrowed, if the server was given one.
    pub(crate) fn get_ref<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.values
            .get(&TypeId::of::<T>())?
            .value
            .downcast_ref::<T>()
    }

    /// Whether the server was given a state of this type.
    pub(crate) fn contains(&self, ty: &StateType) -> bool {
        self.values.contains_key(&(ty.id)())
    }
}

impl fmt::Debug for States {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set()
            .entries(self.values.values().map(|v| v.name))
            .finish()
    }
}

/// What one client session keeps between its calls: a slot for each type, empty until a tool
/// fills it, and dropped when the session ends. From [`Context::session`](crate::Context::session).
///
/// A session is a stdio connection, or an HTTP session of the `initialize` handshake (its
/// `Mcp-Session-Id`). Protocol 2026-07-28 has no sessions: every request stands alone.
///
/// ```
/// use toolwright::{Context, mcp_tool};
///
/// /// The items added so far in this session.
/// struct Cart(std::sync::Mutex<Vec<String>>);
///
/// /// Add an item to this session's cart; returns how many it holds.
/// #[mcp_tool]
/// fn add_to_cart(ctx: &Context, item: String) -> Result<usize, &'static str> {
///     let session = ctx.session().ok_or("this protocol has no sessions")?;
///     let cart = session.get_or_insert_with(|| Cart(Default::default()));
///     let mut items = cart.0.lock().unwrap();
///     items.push(item);
///     Ok(items.len())
/// }
/// ```
#[derive(Default)]
pub struct SessionState {
    slots: Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
}

impl SessionState {
    fn slots(&self) -> MutexGuard<'_, HashMap<TypeId, Arc<dyn Any + Send + Sync>>> {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The session's `T`, if a call has put one.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        let value = Arc::clone(self.slots().get(&TypeId::of::<T>())?);
        value.downcast::<T>().ok()
    }

    /// Puts `value` as the session's `T`, and returns the one it replaces.
    pub fn insert<T: Send + Sync + 'static>(&self, value: T) -> Option<Arc<T>> {
        let previous = self.slots().insert(TypeId::of::<T>(), Arc::new(value))?;
        previous.downcast::<T>().ok()
    }

    /// The session's `T`, put there now by `make` if there was none; concurrent calls of one
    /// session agree on one.
    pub fn get_or_insert_with<T: Send + Sync + 'static>(&self, make: impl FnOnce() -> T) -> Arc<T> {
        let mut slots = self.slots();
        let value = slots
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Arc::new(make()));
        Arc::clone(value)
            .downcast::<T>()
            .expect("a slot holds a value of its own type")
    }

    /// Takes the session's `T` out.
    pub fn remove<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        let value = self.slots().remove(&TypeId::of::<T>())?;
        value.downcast::<T>().ok()
    }
}

impl fmt::Debug for SessionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionState")
            .field("slots", &self.slots().len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_is_found_by_its_type() {
        let mut states = States::default();
        states.insert(Arc::new(7u32));
        states.insert(Arc::new(String::from("notes")));
        assert_eq!(*State::<u32>::from_states(&states).unwrap(), 7);
        assert_eq!(&*State::<String>::from_states(&states).unwrap(), "notes");
        assert_eq!(
            State::<u64>::from_states(&states).unwrap_err(),
            "the server was given no `u64`, the state this tool takes"
        );
        assert!(states.contains(&<State<u32> as FromState>::TYPE));
        assert!(!states.contains(&<State<u64> as FromState>::TYPE));
        assert_eq!(((<State<u64> as FromState>::TYPE).name)(), "u64");
    }

    #[test]
    fn a_session_keeps_one_value_per_type() {
        let session = SessionState::default();
        assert!(session.get::<u32>().is_none());
        assert!(session.insert(1u32).is_none());
        assert_eq!(session.insert(2u32).as_deref(), Some(&1));
        assert_eq!(*session.get_or_insert_with(|| 3u32), 2);
        assert_eq!(*session.get_or_insert_with(|| String::from("new")), "new");
        assert_eq!(session.remove::<u32>().as_deref(), Some(&2));
        assert!(session.get::<u32>().is_none());
    }
}
