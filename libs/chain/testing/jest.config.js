module.exports = {
  displayName: 'chain-testing',
  preset: '../../../jest.preset.js',
  rootDir: __dirname,
};
