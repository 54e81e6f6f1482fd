%x = pd.data "x" : tensor<3xf32>
%a = pd.tanh %b {name = "a"} : (tensor<3xf32>) -> tensor<3xf32>
%b = pd.tanh %a {name = "b"} : (tensor<3xf32>) -> tensor<3xf32>
pd.fetch %b : tensor<3xf32>
