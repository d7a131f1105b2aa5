use extendr_api::prelude::*;

extendr_module! {
    mod mcpserver;
}
