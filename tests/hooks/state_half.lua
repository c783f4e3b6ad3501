-- save_state without restore_state.
function save_state() return {} end
